// A host program (this test) embeds weir in its own actor system
// (docs/cpp-api.md § Step 2: the same job on a session cluster): it joins a session cluster as a
// TaskExecutor offering slots, connects to it as a client, submits jobs
// built in C++ that run on its own slots, and follows them with typed
// requests.
#include <doctest/doctest.h>

#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/send.hpp>

#include <fmt/format.h>

#include "api/cluster.hpp"
#include "api/job_builder.hpp"
#include "cluster_fixture.hpp"
#include "messages/errors.hpp"
#include "user_code_paths.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

TEST_CASE("a host joins a session cluster with its own slots and runs a built job on them") {
  session_cluster cluster; // a jobmanager, no taskmanager
  caf::actor_system_config cfg;
  REQUIRE(!prepare_remote_actor_system(cfg));
  caf::actor_system sys{cfg};
  auto remote = remote_access::start(sys);
  REQUIRE(remote);
  auto worker = (*remote)->join(cluster.address, 2);
  REQUIRE_MESSAGE(worker, describe(worker.error()));
  REQUIRE(cluster.jobmanager->wait_for_stderr(
    fmt::format("TaskExecutor embedded-{} registered with 2 slots", ::getpid()),
    30s));
  auto client = (*remote)->connect(cluster.rest);
  REQUIRE_MESSAGE(client, describe(client.error()));
  CHECK_FALSE(client->in_process());

  job_builder job{"sums on the host's slots"};
  job.parallelism(2);
  job.sequence(1, 1000)
    .map("key_mod", {{"modulus", "3"}})
    .key_by().sum("value").name("sums")
    .collect();
  auto id = client->submit(job.build());
  REQUIRE_MESSAGE(id, describe(id.error()));
  auto result = client->wait(*id);
  REQUIRE_MESSAGE(result, describe(result.error()));
  CHECK(result->state == job_state::finished);
  std::map<std::string, int64_t> sums;
  for (auto& r : to_records(result->collected))
    sums[r.key] = r.num;
  CHECK(sums == std::map<std::string, int64_t>{{"0", 166833}, {"1", 167167},
                                               {"2", 166500}});
  auto status = client->status(*id);
  REQUIRE(status);
  CHECK(status->state == job_state::finished);
  CHECK(status->name == "sums on the host's slots");
  // Cancelling an ended job says so and changes nothing.
  auto cancelled = client->cancel(*id);
  REQUIRE(cancelled);
  CHECK(cancelled->before == job_state::finished);

  // A lambda does not reach the cluster in the other process.
  job_builder lambda{"lambda"};
  lambda.sequence(1, 3).filter([](const record&) { return true; }).name("all")
    .collect();
  auto refused = client->submit(lambda.build());
  REQUIRE_FALSE(refused);
  CHECK(describe(refused.error()).rfind(
          "job 'lambda': step 'all' (a filter lambda) exists only in this "
          "process", 0) == 0);

  // A job the cluster's checks refuse: the error names the step.
  job_builder bad{"bad"};
  bad.sequence(1, 3).sum("bytes").name("totals").collect();
  auto bad_id = client->submit(bad.build());
  REQUIRE_FALSE(bad_id);
  CHECK(describe(bad_id.error()).find("'totals'") != std::string::npos);

  caf::anon_send_exit(*worker, caf::exit_reason::user_shutdown);
}

TEST_CASE("a host ships a library with its job: its WEIR_MAP function runs on a taskmanager") {
  session_cluster cluster;
  cluster.add_worker("worker", 2);
  caf::actor_system_config cfg;
  REQUIRE(!prepare_remote_actor_system(cfg));
  caf::actor_system sys{cfg};
  auto remote = remote_access::start(sys);
  REQUIRE(remote);
  auto client = (*remote)->connect(cluster.rest);
  REQUIRE_MESSAGE(client, describe(client.error()));
  // `doubled` is defined with WEIR_MAP in the library, not in this program.
  job_builder job{"doubled"};
  job.sequence(1, 10)
    .apply("doubled")
    .map("key_mod", {{"modulus", "1"}})
    .key_by().sum("value")
    .collect();
  submit_options with_library;
  with_library.libraries = {test_plugin("builder_drivers")};
  auto id = client->submit(job.build(), with_library);
  REQUIRE_MESSAGE(id, describe(id.error()));
  auto result = client->wait(*id);
  REQUIRE(result);
  CHECK(result->state == job_state::finished);
  REQUIRE(row_count(result->collected) == 1);
  CHECK(to_records(result->collected)[0].num == 110);
  // Without the library the function is unknown, here and there.
  auto without = client->submit(job.build());
  REQUIRE_FALSE(without);
  CHECK(describe(without.error()).find("unknown operator 'doubled'")
        != std::string::npos);
  submit_options missing;
  missing.libraries = {"no/such/lib.so"};
  auto unreadable = client->submit(job.build(), missing);
  REQUIRE_FALSE(unreadable);
  CHECK(describe(unreadable.error())
        == "library 'no/such/lib.so' is not a readable file");
}
