// Outcomes and errors of user code: counters and per-vertex records in
// `weir run`, `weir status` and a driver's job_outcome; failures that name
// the operator (a thrown exception, a crash of a taskmanager process).
#include <doctest/doctest.h>

#include <string>

#include <fmt/format.h>

#include "cluster_fixture.hpp"
#include "process.hpp"
#include "user_code_paths.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

/// Five lines, two of which are not integers.
const char* mixed_lines = "1\n22\nx\n333\nfoo\n";

/// text_file `input` → `op` (vertex `vertex`, parallelism `p`) → collect,
/// without restarts.
std::string spec_of(const temp_dir& dir, const std::string& op,
                    const std::string& vertex, int p = 1) {
  auto input = dir.write("input.txt", mixed_lines);
  return dir.write(op + ".json", fmt::format(R"({{
    "name": "{}", "config": {{"restart-strategy.type": "none"}},
    "vertices": [
      {{"id": "lines", "operator": "text_file", "params": {{"path": "{}"}}}},
      {{"id": "{}", "operator": "{}", "parallelism": {}}},
      {{"id": "out", "operator": "collect"}}],
    "edges": [{{"from": "lines", "to": "{}", "partitioning": "rebalance"}},
              {{"from": "{}", "to": "out", "partitioning": "rebalance"}}]}})",
                                             op, input, vertex, op, p, vertex,
                                             vertex));
}

/// The text after `prefix` on the line of `text` that starts with it.
std::string line_after(const std::string& text, const std::string& prefix) {
  auto at = text.find(prefix);
  if (at == std::string::npos)
    return "(no line '" + prefix + "')";
  auto end = text.find('\n', at);
  return text.substr(at + prefix.size(), end - at - prefix.size());
}

} // namespace

TEST_CASE("user counters are summed over subtasks and shown by weir run") {
  temp_dir dir;
  auto r = run_weir({"run", spec_of(dir, "numbers", "tokens", 2), "--libjars",
                     test_plugin("faults")});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(sorted_lines(r.out)
        == std::vector<std::string>{"n\t1", "n\t22", "n\t333"});
  CHECK(r.err.find("Counter tokens.bad_lines: 2\n"
                   "Counter tokens.good_lines: 3\n"
                   "Counter tokens.never: 0\n")
        != std::string::npos);
}

TEST_CASE("weir status shows each vertex's records and the counters") {
  session_cluster c;
  c.add_worker("tm-1", 2);
  auto submitted = c.client({"run", "-d", spec_of(c.dir, "numbers", "tokens", 2),
                             "--libjars", test_plugin("faults")});
  REQUIRE(submitted.exit_code == 0);
  auto id = lines_of(submitted.out).back();
  auto waited = c.client({"wait", id});
  CHECK(waited.exit_code == 0);
  auto status = c.client({"status", id});
  CHECK(status.exit_code == 0);
  CHECK(status.out.find("Records: 5 in, 3 out\n"
                        "Vertex lines: 5 in, 5 out\n"
                        "Vertex tokens: 5 in, 3 out\n"
                        "Vertex out: 3 in, 3 out\n"
                        "Counter tokens.bad_lines: 2\n"
                        "Counter tokens.good_lines: 3\n"
                        "Counter tokens.never: 0\n")
        != std::string::npos);
}

TEST_CASE("a driver reads counters and records per vertex from job_outcome") {
  temp_dir dir;
  auto r = run_weir({"run", "-D", "-c", "counts", test_plugin("faults"),
                     spec_of(dir, "numbers", "tokens", 2)});
  INFO("stderr: " << r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "bad_lines 2\n"
                 "good_lines 3\n"
                 "tokens 5 in, 3 out\n"
                 "job 5 in, 3 out\n"
                 "runtime measured\n"
                 "vertex 'tokens' has no counter 'bad_line'\n");
}

TEST_CASE("an exception from user code names the vertex, operator, subtask "
          "and type") {
  temp_dir dir;
  auto r = run_weir({"run", spec_of(dir, "throws", "parse"), "--libjars",
                     test_plugin("faults")});
  CHECK(r.exit_code == 1);
  CHECK(line_after(r.err, " ended FAILED: ")
        == "vertex 'parse' (operator 'throws', subtask 1/1) threw "
           "std::invalid_argument: stoll");
}

TEST_CASE("user code that crashes a taskmanager fails its job with the "
          "operator and the signal") {
  session_cluster c;
  c.add_worker("tm-1", 1);
  auto r = c.client({"run", spec_of(c.dir, "segv", "boom"), "--libjars",
                     test_plugin("faults")});
  CHECK(r.exit_code == 1);
  auto cause = "operator 'segv' (vertex 'boom', subtask 1/1) crashed the "
               "TaskExecutor (signal 11)";
  CHECK(line_after(r.err, " ended FAILED: ") == cause);
  // The worker said so before it died by the signal.
  auto worker = c.workers[0]->finish(30s);
  CHECK(worker.exit_code == -1);
  CHECK(worker.err.find(fmt::format("weir: {}\n", cause)) != std::string::npos);
  auto id = line_after(r.err, "Job with JobID ");
  id = id.substr(0, id.find(' '));
  auto status = c.client({"status", id});
  CHECK(line_after(status.out, "Cause: ") == cause);
}
