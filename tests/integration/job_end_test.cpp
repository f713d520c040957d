// Jobs end the way users are told: a stopped job's output is there, a
// savepoint that does not fit is refused before submission, a failed job
// shows its cause, and a cancel is prompt and says what it did.
#include <doctest/doctest.h>

#include <csignal>
#include <cstdlib>
#include <regex>

#include <fmt/format.h>

#include "cluster_fixture.hpp"
#include "process.hpp"
#include "user_code_paths.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

/// The job id `weir run -d` printed.
std::string detached(const std::vector<std::string>& args) {
  auto r = run_weir(args);
  REQUIRE(r.exit_code == 0);
  return lines_of(r.out).back();
}

/// The savepoint path in the output of `weir savepoint` or `weir stop`.
std::string savepoint_path(const process_result& r) {
  const std::string prefix = "Savepoint completed. Path: ";
  auto at = r.out.find(prefix);
  REQUIRE(at != std::string::npos);
  auto path = r.out.substr(at + prefix.size());
  return path.substr(0, path.find('\n'));
}

/// An endless generator (3 keys, `rate` records a second) into `sink`,
/// through a keyed count when `with_counts`.
std::string endless_spec(const temp_dir& dir, const std::string& name,
                         const std::string& sink, bool with_counts) {
  auto counts = with_counts
                  ? std::string{R"({"id": "counts", "operator": "count"},)"}
                  : std::string{};
  auto edges = with_counts
                 ? std::string{R"({"from": "events", "to": "counts", "partitioning": "hash"},
      {"from": "counts", "to": "out", "partitioning": "forward"})"}
                 : std::string{R"({"from": "events", "to": "out", "partitioning": "forward"})"};
  return dir.write(name + ".json", fmt::format(R"({{
    "name": "{}", "parallelism": 1,
    "vertices": [
      {{"id": "events", "operator": "generator", "params": {{"count": -1, "rate": 500, "keys": 3}}}},
      {}
      {}],
    "edges": [{}]}})",
                                               name, counts, sink, edges));
}

/// `weir status` of job `id` once every subtask runs and records came out.
bool running_with_output(one_worker_cluster& c, const std::string& id) {
  return eventually([&] {
    auto s = run_weir({"status", "-m", c.rest, id});
    std::smatch m;
    static const std::regex out{R"(Records: \d+ in, (\d+) out)"};
    return s.out.find("CREATED") == std::string::npos
           && s.out.find("DEPLOYING") == std::string::npos
           && s.out.find("INITIALIZING") == std::string::npos
           && std::regex_search(s.out, m, out) && std::stoll(m[1]) > 0;
  });
}

/// SIGINT to an attached `weir run`: it cancels its job and ends with 1.
void interrupt_ends_canceled(running_process& attached) {
  attached.signal(SIGINT);
  auto r = attached.finish(10s);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("ended CANCELED") != std::string::npos);
}

} // namespace

TEST_CASE("weir stop: a job with an at-least-once text_file sink FINISHES "
          "with its output file complete") {
  one_worker_cluster c;
  auto out = c.dir.file("out.txt");
  auto sink = fmt::format(R"({{"id": "out", "operator": "text_file", "params": {{"path": "{}"}}}})",
                          out);
  auto id = detached({"run", "-m", c.rest, "-d",
                      endless_spec(c.dir, "endless", sink, true)});
  REQUIRE(running_with_output(c, id));
  auto stopped = run_weir({"stop", "-m", c.rest, id, "--savepointPath",
                           c.dir.file("savepoints")});
  REQUIRE(stopped.exit_code == 0);
  CHECK(exists(savepoint_path(stopped)));
  CHECK(stopped.out.find("Job " + id + " is stopped.") != std::string::npos);
  // The sources ended at the savepoint: every subtask finished, and the
  // sink published its file (before, it was removed as a canceled one's).
  CHECK(exists(out));
  CHECK_FALSE(exists(out + ".inprogress"));
  auto lines = lines_of(read_file(out));
  CHECK_FALSE(lines.empty());
  auto status = run_weir({"status", "-m", c.rest, id});
  CHECK(status.out.find(" : endless (FINISHED) ") != std::string::npos);
  // Every record the job counted as out is in the file.
  std::smatch m;
  REQUIRE(std::regex_search(status.out, m,
                            std::regex{R"(Records: \d+ in, (\d+) out)"}));
  CHECK(std::stoul(m[1]) == lines.size());
  CHECK(c.master->wait_for_stderr("(endless) stops: its sources end at the "
                                  "savepoint",
                                  30s));
  CHECK(c.master->wait_for_stderr("(endless) switched from RUNNING to FINISHED",
                                  30s));
}

TEST_CASE("a savepoint that does not fit the job is refused before it is "
          "submitted, also detached") {
  one_worker_cluster c;
  auto discard = std::string{R"({"id": "out", "operator": "discard"})"};
  auto id = detached({"run", "-m", c.rest, "-d",
                      endless_spec(c.dir, "counted", discard, true)});
  REQUIRE(running_with_output(c, id));
  auto taken = run_weir({"savepoint", "-m", c.rest, id,
                         c.dir.file("savepoints")});
  REQUIRE(taken.exit_code == 0);
  auto savepoint = savepoint_path(taken);
  CHECK(run_weir({"cancel", "-m", c.rest, id}).exit_code == 0);
  // No `counts` vertex in this job.
  auto plain = endless_spec(c.dir, "plain", discard, false);
  auto refused = run_weir({"run", "-m", c.rest, "-d", "-s", savepoint, plain});
  CHECK(refused.exit_code == 2);
  CHECK(refused.out.empty());
  CHECK(refused.err == "weir run: -s: savepoint '" + savepoint
                         + "' holds state of vertex 'counts', which this job "
                           "does not have (-n/--allowNonRestoredState skips "
                           "it)\n");
  // A vertex at a parallelism above its key groups.
  auto rescaled = run_weir({"run", "-m", c.rest, "-d", "-p", "129", "-s",
                            savepoint,
                            endless_spec(c.dir, "rescaled", discard, true)});
  CHECK(rescaled.exit_code == 2);
  CHECK(rescaled.out.empty());
  CHECK(rescaled.err == "weir run: -s: savepoint '" + savepoint
                          + "' holds vertex 'counts' in 128 key groups (its "
                            "max parallelism), the job runs it at parallelism "
                            "129\n");
  // With -n the state is skipped and the job runs.
  auto allowed = detached({"run", "-m", c.rest, "-d", "-s", savepoint, "-n",
                           plain});
  CHECK(run_weir({"cancel", "-m", c.rest, allowed}).exit_code == 0);
}

TEST_CASE("weir status and weir list -a show a failed job's cause") {
  one_worker_cluster c;
  auto spec = c.dir.write("square.json", R"({
    "name": "square", "config": {"restart-strategy.type": "none"},
    "vertices": [
      {"id": "numbers", "operator": "sequence",
       "params": {"from": 4294967296, "to": 4294967296}},
      {"id": "squared", "operator": "map", "params": {"function": "square"}},
      {"id": "out", "operator": "discard"}],
    "edges": [{"from": "numbers", "to": "squared"},
              {"from": "squared", "to": "out"}]})");
  auto id = detached({"run", "-m", c.rest, "-d", spec});
  REQUIRE(c.master->wait_for_stderr("(square) FAILED: ", 30s));
  auto status = run_weir({"status", "-m", c.rest, id});
  CHECK(status.exit_code == 0);
  CHECK(status.out.find(" : square (FAILED) ") != std::string::npos);
  CHECK(std::regex_search(status.out,
                          std::regex{"\nCause: .*square: int64 overflow at "
                                     "value 4294967296\n"}));
  auto list = run_weir({"list", "-m", c.rest, "-a"});
  CHECK(std::regex_search(list.out,
                          std::regex{" : " + id
                                     + R"( : square \(FAILED\) [0-9.]+ s )"
                                       "cause: .*square: int64 overflow at "
                                       "value 4294967296\n"}));
}

TEST_CASE("a cancel is prompt and says what it did: a driver waiting for "
          "slots") {
  session_cluster c; // no taskmanager: nothing gets a slot
  auto drivers = test_plugin("drivers");
  auto submitted = c.client({"run", "-D", "-d", "-c", "waits_on_endless",
                             drivers});
  REQUIRE(submitted.exit_code == 0);
  auto app = lines_of(submitted.out).back();
  REQUIRE(eventually([&] {
    return c.client({"list"}).out.find("waiting for 1 of 1 slots")
           != std::string::npos;
  }));
  auto cancel = c.client({"cancel", app});
  CHECK(cancel.exit_code == 0);
  CHECK(cancel.out == "Cancelled job " + app + ": it is CANCELED.\n");
  auto again = c.client({"cancel", app});
  CHECK(again.exit_code == 0);
  CHECK(again.out == "Job " + app
                       + " had already ended (CANCELED); nothing to cancel.\n");
  // Ctrl-C of an attached client whose driver waits for slots.
  running_process attached{{std::getenv("WEIR_BIN"), "run", "-D", "-m",
                            c.rest, "-c", "waits_on_endless", drivers}};
  REQUIRE(attached.wait_for_stderr("Application submitted with id", 30s));
  REQUIRE(eventually([&] {
    return c.client({"list"}).out.find("waiting for 1 of 1 slots")
           != std::string::npos;
  }));
  interrupt_ends_canceled(attached);
}

TEST_CASE("Ctrl-C of an attached driver whose job waits for slots ends both "
          "at once") {
  session_cluster c;
  c.add_worker("w1", 1); // the driver's slot; its job gets none
  running_process attached{{std::getenv("WEIR_BIN"), "run", "-D", "-m",
                            c.rest, "-c", "waits_on_endless",
                            test_plugin("drivers")}};
  REQUIRE(attached.wait_for_stdout("waiting for ", 60s));
  REQUIRE(eventually([&] {
    return c.client({"list"}).out.find(
             " : endless (RUNNING) ")
             != std::string::npos
           && c.client({"list"}).out.find(" s, waiting for 1 of 1 slots")
           != std::string::npos;
  }));
  interrupt_ends_canceled(attached);
  auto list = c.client({"list", "-a"});
  CHECK(list.out.find(" : endless (CANCELED) ") != std::string::npos);
  CHECK(list.out.find("CANCELLING") == std::string::npos);
}
