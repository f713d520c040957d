// The client's wait for a job's result (wait_for_job: weir run, weir wait,
// weir run -D) against a fake Dispatcher on a real actor system.
#include <doctest/doctest.h>

#include <chrono>
#include <optional>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/response_promise.hpp>

#include "process/exit_codes.hpp"
#include "cli/remote.hpp"
#include "client/dispatcher_jobs.hpp"
#include "cluster/runtime_config.hpp"

using namespace weir;
using namespace std::chrono_literals;

namespace {

using answer_atom = caf::atom_constant<caf::atom("answer")>;

/// A Dispatcher that answers the first result request `delay` after it came
/// (with a FINISHED result, or not at all when `answers` is false) and ends
/// right after, as an application cluster's Dispatcher ends with its
/// application. Driver output polls find nothing.
caf::behavior late_dispatcher(caf::event_based_actor* self, job_id id,
                              caf::timespan delay, bool answers) {
  auto first = std::make_shared<std::optional<caf::response_promise>>();
  return {
    [=](result_atom, job_id) -> caf::result<job_result> {
      auto rp = self->make_response_promise();
      if (!*first) {
        *first = rp;
        self->delayed_send(self, delay, answer_atom::value);
      }
      return rp;
    },
    [=](collect_atom, job_id, int64_t) {
      return std::vector<collected_table>{};
    },
    [=](answer_atom) {
      if (answers) {
        job_result r;
        r.id = id;
        r.name = "late";
        r.state = job_state::finished;
        (*first)->deliver(std::move(r));
      }
      self->quit();
    },
  };
}

struct fake_cluster {
  caf::actor_system_config cfg;
  std::optional<caf::actor_system> sys;
  job_id id = job_id::random();

  fake_cluster() {
    configure_actor_system(cfg);
    sys.emplace(cfg);
  }

  int wait(caf::timespan delay, bool answers, bool stream) {
    auto fake = sys->spawn(late_dispatcher, id, delay, answers);
    client::dispatcher_jobs jobs{*sys, caf::actor_cast<dispatcher_actor>(fake)};
    return cli::wait_for_job(jobs, id, "weir wait", stream);
  }
};

} // namespace

TEST_CASE("a result answered late, just before the Dispatcher ends, reaches "
          "the client") {
  // Longer than the client's progress and driver-output polls: an answer
  // to a request the client had given up on was lost, and the client then
  // saw the Dispatcher end (exit 3).
  fake_cluster c;
  SUBCASE("weir run, weir wait") {
    CHECK(c.wait(600ms, true, false) == exit_ok);
  }
  SUBCASE("weir run -D (polling the driver's output meanwhile)") {
    CHECK(c.wait(600ms, true, true) == exit_ok);
  }
}

TEST_CASE("a Dispatcher that ends without answering: exit 3") {
  fake_cluster c;
  CHECK(c.wait(10ms, false, false) == exit_cluster_error);
}
