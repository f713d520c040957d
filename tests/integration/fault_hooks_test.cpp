// The test hooks (weir.fault.*, docs/operations.md § Test hooks). In a
// build with them (-Dfault_injection=true: scripts/test builds one beside
// the default build and runs this file there) the crashes they inject are
// survived as documented. In the default build, which users get, a job that
// asks for them is refused as asking for an unknown key, over the CLI and
// over REST, and the jobmanager goes on serving.
#include <doctest/doctest.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cluster_fixture.hpp"
#include "config/build_features.hpp"
#include "process.hpp"
#include "rest_client.hpp"

using namespace weir::test;
using namespace std::chrono_literals;
using nlohmann::json;

#if WEIR_FAULT_INJECTION

TEST_CASE("a standby that took over exits with code 4 when its supervisor "
          "gives up, also while a client does not read") {
  temp_dir dir;
  std::string weir = std::getenv("WEIR_BIN");
  auto state = dir.file("state");
  running_process leader{{weir, "jobmanager", "--port", "0", "--state-dir",
                          state}};
  REQUIRE_FALSE(listening_address(leader).empty());
  running_process standby{{weir, "jobmanager", "--port", "0", "--state-dir",
                           state, "-Djobmanager.supervision.max-restarts=0",
                           "-Dheartbeat.timeout=10min", any_rest_port}};
  REQUIRE(standby.wait_for_stderr("waiting to take over", 30s));
  leader.signal(SIGKILL);
  leader.finish(30s);
  REQUIRE(standby.wait_for_stderr("took over " + state + " as the leader",
                                  30s));
  auto address = listening_address(standby);
  running_process worker{{weir, "taskmanager", "-m", address, "--id", "tm-1"}};
  REQUIRE(standby.wait_for_stderr("TaskExecutor tm-1 registered", 30s));
  auto rest = rest_address(standby);
  auto client = client_not_reading(standby, rest, dir);
  // The Dispatcher crashes once this job's result is out (test hook); with
  // no restart allowed, the supervisor gives up.
  auto crash = dir.write("crash.json", R"({
    "name": "crash", "config": {"weir.fault.dispatcher-crash": true},
    "vertices": [
      {"id": "numbers", "operator": "sequence", "params": {"from": 1, "to": 4}},
      {"id": "out", "operator": "collect"}],
    "edges": [{"from": "numbers", "to": "out", "partitioning": "forward"}]})");
  auto last = run_weir({"run", "-m", rest, crash}, 60s);
  // The jobmanager ends right after storing the result: the client gets it
  // if its poll came first, else it says the master is gone (the stored
  // result waits for the next jobmanager).
  CHECK((last.exit_code == 0
         || (last.exit_code == 3
             && last.err.find("connection to the master lost (")
                  != std::string::npos)));
  REQUIRE(standby.wait_for_stderr("jobmanager: exiting: the Dispatcher "
                                  "crashed more than 0 restarts within 60000 "
                                  "ms\n",
                                  30s));
  // Before, it went on running here, not listening and deaf to SIGTERM, for
  // as long as the client did not read.
  auto r = standby.finish(5s);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 4);
  CHECK(r.err.find("supervisor: the Dispatcher crashed (uncaught exception: "
                   "injected Dispatcher crash (weir.fault.dispatcher-crash)); "
                   "giving up after 0 restarts within 60000 ms")
        != std::string::npos);
  client->signal(SIGCONT);
  client->finish(30s);
  worker.signal(SIGTERM);
  worker.finish(30s);
}

namespace {

/// numbers 1..n → collect, whose first `crashes` JobMasters crash once the
/// job is deployed (test hook).
std::string crashing_spec(const temp_dir& dir, int crashes) {
  return dir.write("crashing.json", fmt::format(R"({{
    "name": "crashing", "parallelism": 2,
    "config": {{"weir.fault.jobmaster-crashes": {}}},
    "vertices": [
      {{"id": "numbers", "operator": "sequence", "params": {{"from": 1, "to": 1000}}}},
      {{"id": "out", "operator": "collect", "parallelism": 1}}],
    "edges": [{{"from": "numbers", "to": "out", "partitioning": "rebalance"}}]}})",
                                                crashes));
}

std::vector<std::string> one_to(int n) {
  std::vector<std::string> lines;
  for (int i = 1; i <= n; ++i)
    lines.push_back(std::to_string(i));
  std::sort(lines.begin(), lines.end());
  return lines;
}

} // namespace

TEST_CASE("a crashed JobMaster is restarted and its job finishes once") {
  one_worker_cluster c;
  auto& master = *c.master;
  auto& address = c.rest;
  auto r = run_weir({"run", "-m", address, crashing_spec(c.dir, 1)});
  CHECK(r.exit_code == 0);
  CHECK(sorted_lines(r.out) == one_to(1000));
  REQUIRE(master.wait_for_stderr("restarting it", 30s));
  CHECK(master.stderr_so_far().find(
          "(crashing): JobMaster crashed (uncaught exception: injected "
          "JobMaster crash 1 of 1 (weir.fault.jobmaster-crashes)); restarting "
          "it (1 of 3 restarts within 60000 ms)")
        != std::string::npos);
  auto list = run_weir({"list", "-m", address, "-a"});
  CHECK(list.out.find(" : crashing (FINISHED) ") != std::string::npos);
  CHECK(list.out.find("No running jobs.\nNo scheduled jobs.\n") == 0);
}

TEST_CASE("a job whose JobMaster keeps crashing fails alone and is not "
          "recovered again") {
  restartable_cluster c;
  auto& [dir, weir, master, worker] = c;
  auto& address = master.rest;
  // Four crashes within a minute (the default intensity: 3 restarts, after
  // 0, 100 and 200 ms) fail the job; before, they took the Dispatcher down,
  // and every new Dispatcher recovered the job and crashed the same way.
  auto r = run_weir({"run", "-m", address, crashing_spec(dir, 1000)}, 60s);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("ended FAILED: its JobMaster crashed 4 times within 60000 "
                   "ms (last: uncaught exception: injected JobMaster crash 4 "
                   "of 1000 (weir.fault.jobmaster-crashes))\n")
        != std::string::npos);
  REQUIRE(master->wait_for_stderr(
    "(crashing): JobMaster crashed (uncaught exception: injected JobMaster "
    "crash 4 of 1000 (weir.fault.jobmaster-crashes)); failing the job after 3 "
    "restarts within 60000 ms",
    30s));
  auto log = master->stderr_so_far();
  CHECK(log.find("(crashing): JobMaster crashed (uncaught exception: injected "
                 "JobMaster crash 2 of 1000 (weir.fault.jobmaster-crashes)); "
                 "restarting it in 100 ms (2 of 3 restarts within 60000 ms)")
        != std::string::npos);
  CHECK(log.find("supervisor:") == std::string::npos);
  // The jobmanager goes on serving.
  auto ok = run_weir({"run", "-m", address, "examples/collect.json", "--to",
                      "4"}, 60s);
  CHECK(ok.exit_code == 0);
  CHECK(ok.out == "2\n4\n");
  // Its result is stored: a new jobmanager on the directory lists it FAILED
  // and does not run it again.
  master.kill();
  master.restart();
  auto list = run_weir({"list", "-m", address, "-a"}, 30s);
  CHECK(list.out.find(" : crashing (FAILED) ") != std::string::npos);
  worker.signal(SIGTERM);
  worker.finish(30s);
  master->signal(SIGTERM);
  auto second = master->finish(30s);
  CHECK(second.exit_code == 0);
  CHECK(second.err.find("recovered") == std::string::npos);
}

#else

namespace {

/// numbers 1..4 → collect, asking the Dispatcher to crash once it ended.
json crash_spec() {
  return json::parse(R"({
    "name": "crash", "config": {"weir.fault.dispatcher-crash": true},
    "vertices": [
      {"id": "numbers", "operator": "sequence", "params": {"from": 1, "to": 4}},
      {"id": "out", "operator": "collect"}],
    "edges": [{"from": "numbers", "to": "out", "partitioning": "forward"}]})");
}

} // namespace

TEST_CASE("a build without test hooks refuses their keys on the CLI: exit 2") {
  temp_dir dir;
  auto spec = dir.write("crash.json", crash_spec().dump());
  auto in_spec = run_weir({"run", spec}, 60s);
  CHECK(in_spec.exit_code == 2);
  CHECK(in_spec.err == spec + ": config: unknown key "
                              "'weir.fault.dispatcher-crash' (see "
                              "docs/configuration.md)\n");
  CHECK(in_spec.out.empty());
  auto flag = run_weir({"run", "examples/collect.json",
                        "-Dweir.fault.jobmaster-crashes=1"}, 60s);
  CHECK(flag.exit_code == 2);
  CHECK(flag.err == "weir run: -Dweir.fault.jobmaster-crashes=1: unknown key "
                    "'weir.fault.jobmaster-crashes' (see "
                    "docs/configuration.md)\n");
}

TEST_CASE("a build without test hooks refuses their keys over REST: 400, "
          "and the jobmanager goes on") {
  rest_cluster c;
  // Before, five of these crashed the Dispatcher four times and the
  // jobmanager exited with code 4.
  for (int i = 0; i < 5; ++i) {
    auto in_spec = post(c.url, "/jobs", {{"spec", crash_spec()}});
    CHECK(in_spec.status == 400);
    CHECK(in_spec.body == errors("spec: config: unknown key "
                                 "'weir.fault.dispatcher-crash' (see "
                                 "docs/configuration.md)"));
    auto in_request = post(
      c.url, "/jobs",
      {{"spec", json::parse(read_file("examples/collect.json"))},
       {"config", {{"weir.fault.jobmaster-crashes", "1"}}}});
    CHECK(in_request.status == 400);
    CHECK(in_request.body["errors"][0].get<std::string>().find(
            "unknown key 'weir.fault.jobmaster-crashes'")
          != std::string::npos);
  }
  c.add_worker("tm-1", 1);
  auto ok = run_weir({"run", "-m", c.rest, "examples/collect.json", "--to",
                      "4"}, 60s);
  CHECK(ok.exit_code == 0);
  CHECK(ok.out == "2\n4\n");
  CHECK(c.jobmanager->stderr_so_far().find("injected") == std::string::npos);
}

#endif
