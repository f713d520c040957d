// Job failover: a failed subtask or a lost worker restarts the job per its
// restart strategy, from the sources, and the results stay exact.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <csignal>
#include <cstdlib>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "job_specs.hpp"
#include "cluster_fixture.hpp"
#include "process.hpp"
#include "reference.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

/// numbers 1..n → key mod 13 → (fails once after 5000 records per subtask,
/// when `marker` is given) → hash → sum → `sink`.
std::string sum_spec(const std::string& marker, const std::string& sink,
                     const std::string& config) {
  auto fail = marker.empty()
                ? std::string{R"({"function": "identity"})"}
                : fmt::format(R"({{"function": "fail_once", "marker": "{}", "after": 5000}})",
                              marker);
  return fmt::format(R"({{
    "name": "sums", "parallelism": 2, "params": {{"n": 200000, "output": "-"}},
    {}
    "vertices": [
      {{"id": "numbers", "operator": "sequence", "params": {{"from": 1, "to": "${{n}}"}}}},
      {{"id": "keyed", "operator": "map", "params": {{"function": "key_mod", "modulus": 13}}}},
      {{"id": "flaky", "operator": "map", "params": {}}},
      {{"id": "sums", "operator": "sum"}},
      {{"id": "out", "operator": "{}", {} "parallelism": 1}}],
    "edges": [
      {{"from": "numbers", "to": "keyed", "partitioning": "forward"}},
      {{"from": "keyed", "to": "flaky", "partitioning": "forward"}},
      {{"from": "flaky", "to": "sums", "partitioning": "hash"}},
      {{"from": "sums", "to": "out", "partitioning": "rebalance"}}]}})",
                     config, fail, sink,
                     sink == "text_file" ? R"("params": {"path": "${output}"},)" : "");
}

std::vector<std::string> expected_sums(int64_t n) {
  std::map<std::string, int64_t> sums;
  for (int64_t i = 1; i <= n; ++i)
    sums[std::to_string(i % 13)] += i;
  return as_lines(sums);
}

/// generator (`count` records at 1000/s per subtask, `keys` keys) → count
/// → collect, at parallelism 2: a job that runs for a while.
std::string paced_spec(const temp_dir& dir, int count, int keys) {
  return dir.write("paced.json", fmt::format(R"({{
    "name": "paced", "parallelism": 2,
    "vertices": [
      {{"id": "events", "operator": "generator", "params": {{"count": {}, "rate": 1000, "keys": {}}}}},
      {{"id": "counts", "operator": "count"}},
      {{"id": "out", "operator": "collect", "parallelism": 1}}],
    "edges": [
      {{"from": "events", "to": "counts", "partitioning": "hash"}},
      {{"from": "counts", "to": "out", "partitioning": "rebalance"}}]}})",
                                             count, keys));
}

/// The job id an attached `weir run` printed on its first stderr line.
std::string submitted_job_id(running_process& run) {
  const std::string prefix = "Job has been submitted with JobID ";
  REQUIRE(run.wait_for_stderr(prefix, 30s));
  REQUIRE(run.wait_for_stderr("\n", 30s));
  auto& err = run.stderr_so_far();
  return err.substr(err.find(prefix) + prefix.size(), 32);
}

/// A tiny job named "done" that finishes at once.
std::string done_spec(const temp_dir& dir) {
  return dir.write("done.json", R"({
    "name": "done",
    "vertices": [
      {"id": "numbers", "operator": "sequence", "params": {"from": 1, "to": 3}},
      {"id": "out", "operator": "collect"}],
    "edges": [{"from": "numbers", "to": "out"}]})");
}

constexpr const char* fixed_delay = R"("config": {"restart-strategy.type": "fixed-delay",
      "restart-strategy.fixed-delay.attempts": 2,
      "restart-strategy.fixed-delay.delay": "10 ms"},)";

} // namespace

TEST_CASE("a failed subtask restarts the job and the results stay exact") {
  temp_dir dir;
  auto spec = dir.write("sums.json", sum_spec(dir.file("marker"), "collect",
                                              fixed_delay));
  auto r = run_weir({"run", spec});
  REQUIRE(r.exit_code == 0);
  CHECK(exists(dir.file("marker"))); // the failure did happen
  CHECK(sorted_lines(r.out) == expected_sums(200000));
}

TEST_CASE("a restarted file sink is rewritten, not appended to") {
  temp_dir dir;
  auto spec = dir.write("sums.json", sum_spec(dir.file("marker"), "text_file",
                                              fixed_delay));
  auto out = dir.file("sums.txt");
  auto r = run_weir({"run", spec, "--output", out});
  REQUIRE(r.exit_code == 0);
  CHECK(exists(dir.file("marker")));
  CHECK(sorted_lines(read_file(out)) == expected_sums(200000));
  CHECK_FALSE(exists(out + ".inprogress"));
}

TEST_CASE("by default (exponential-delay) a failed job restarts, exactly") {
  temp_dir dir;
  auto spec = dir.write("sums.json", sum_spec(dir.file("marker"), "collect", ""));
  auto r = run_weir({"run", spec});
  REQUIRE(r.exit_code == 0);
  CHECK(exists(dir.file("marker"))); // the failure did happen
  CHECK(sorted_lines(r.out) == expected_sums(200000));
}

TEST_CASE("with restart strategy none the failure fails the job") {
  temp_dir dir;
  auto marker = dir.file("marker");
  auto spec = dir.write("sums.json", sum_spec(
    marker, "collect", R"("config": {"restart-strategy.type": "none"},)"));
  auto r = run_weir({"run", spec});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("ended FAILED: numbers -> keyed -> flaky (") != std::string::npos);
  CHECK(r.err.find("vertex 'flaky': injected failure (fail_once, marker '"
                   + marker + "')")
        == std::string::npos); // map errors name the chain, not the open step
  CHECK(r.err.find("injected failure (fail_once, marker '" + marker + "')")
        != std::string::npos);
}

TEST_CASE("a job whose restarts are used up fails with the strategy's reason") {
  temp_dir dir;
  // Two markers in two chains would need two failures; one attempt only.
  auto spec = dir.write("sums.json",
                        sum_spec(dir.file("marker"), "collect",
                                 R"("config": {"restart-strategy.type": "fixed-delay",
                                    "restart-strategy.fixed-delay.attempts": 0},)"));
  auto r = run_weir({"run", spec});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("(restart strategy fixed-delay: 0 restart attempts used up)")
        != std::string::npos);
}

TEST_CASE("a bad restart strategy in the spec is refused up front") {
  temp_dir dir;
  auto spec = dir.write("sums.json",
                        sum_spec("", "collect",
                                 R"("config": {"restart-strategy.type": "sometimes"},)"));
  auto r = run_weir({"run", spec});
  CHECK(r.exit_code == 2);
  CHECK(r.err == spec + ": config: key 'restart-strategy.type': expected one of "
                        "none, off, disable, fixed-delay, fixeddelay, "
                        "exponential-delay, exponentialdelay, failure-rate, "
                        "failurerate, got 'sometimes'\n");
}

namespace {

/// A jobmanager with two workers, a paced job running on the first one;
/// `sig` hits that worker; the job must still finish with exact counts.
void lose_worker_during_job(int sig) {
  temp_dir dir;
  std::string weir = std::getenv("WEIR_BIN");
  running_process master{{weir, "jobmanager", "--port", "0", "--state-dir",
                          dir.file("state"),
                          "-Drestart-strategy.type=fixed-delay",
                          "-Drestart-strategy.fixed-delay.delay=50 ms",
                          any_rest_port}};
  auto address = listening_address(master);
  REQUIRE_FALSE(address.empty());
  auto rest = rest_address(master);
  auto victim = std::make_unique<running_process>(std::vector<std::string>{
    weir, "taskmanager", "-m", address, "--slots", "2", "--id", "victim"});
  REQUIRE(master.wait_for_stderr("TaskExecutor victim registered", 30s));
  running_process survivor{{weir, "taskmanager", "-m", address, "--slots", "2",
                            "--id", "survivor"}};
  REQUIRE(master.wait_for_stderr("TaskExecutor survivor registered", 30s));
  // About 2 s of paced input; packed slots put the job on the victim first.
  auto spec = paced_spec(dir, 4000, 7);
  running_process run{{weir, "run", "-m", rest, spec}};
  auto id = submitted_job_id(run);
  // Wait (with a deadline) until subtasks run on the victim, so that its
  // loss hits deployed subtasks.
  auto until = std::chrono::steady_clock::now() + 30s;
  bool running_there = false;
  while (!running_there && std::chrono::steady_clock::now() < until) {
    auto s = run_weir({"status", "-m", rest, id}, 30s);
    running_there = s.out.find("RUNNING       victim") != std::string::npos;
  }
  REQUIRE(running_there);
  auto hit = std::chrono::steady_clock::now();
  victim->signal(sig);
  CHECK(master.wait_for_stderr("TaskExecutor victim lost", 30s));
  auto detected = std::chrono::steady_clock::now() - hit;
  MESSAGE("signal " << sig << ": TaskExecutor declared lost after "
          << std::chrono::duration_cast<std::chrono::milliseconds>(detected).count()
          << " ms");
  // A killed worker's connection closes at once; a stopped one misses
  // heartbeat.timeout (3 s) of heartbeats.
  CHECK(detected < (sig == SIGSTOP ? 5s : 1s));
  CHECK(master.wait_for_stderr("(paced) restarts in ", 30s));
  auto r = run.finish(60s);
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> expected;
  for (int k = 0; k < 7; ++k)
    expected.push_back(fmt::format("key-{}\t{}", k, 4000 / 7 + (k < 4000 % 7 ? 1 : 0)));
  std::sort(expected.begin(), expected.end());
  CHECK(sorted_lines(r.out) == expected);
  if (sig == SIGSTOP)
    victim->signal(SIGCONT);
  victim->signal(SIGKILL);
  victim->finish(30s);
  survivor.signal(SIGTERM);
  survivor.finish(30s);
  master.signal(SIGTERM);
  master.finish(30s);
}

} // namespace

TEST_CASE("a killed worker's subtasks run again on the surviving worker") {
  lose_worker_during_job(SIGKILL);
}

TEST_CASE("a stopped (hung) worker is declared lost by heartbeats") {
  lose_worker_during_job(SIGSTOP);
}

TEST_CASE("a killed jobmanager's unfinished job is recovered by its successor") {
  restartable_cluster c;
  auto& [dir, weir, master, worker] = c;
  auto& address = master.rest;
  auto done = done_spec(dir);
  auto finished = run_weir({"run", "-m", address, done}, 60s);
  REQUIRE(finished.exit_code == 0);
  auto spec = paced_spec(dir, 3000, 5);
  running_process run{{weir, "run", "-m", address, spec}};
  REQUIRE(master->wait_for_stderr("(paced) switched from CREATED to RUNNING", 30s));
  auto id = submitted_job_id(run);
  // Its subtasks run on the worker when the master dies.
  REQUIRE(eventually([&] {
    return run_weir({"status", "-m", address, id}, 30s).out.find(
             "RUNNING       tm-1")
           != std::string::npos;
  }));
  master.kill();
  auto attached = run.finish(60s);
  CHECK(attached.exit_code == 3);
  CHECK(attached.err.find("weir run: connection to the master lost (")
        != std::string::npos);
  CHECK(attached.err.find("weir wait -m " + address + " " + id)
        != std::string::npos);
  // The worker keeps what it ran for the dead master and registers again;
  // a collect sink's job is not adopted (its rows in flight went to the
  // dead master): it starts over.
  REQUIRE(worker.wait_for_stderr("lost the jobmanager; reconnecting", 30s));
  master.restart();
  REQUIRE(master->wait_for_stderr("job " + id + " (paced) recovered", 30s));
  CHECK(master->wait_for_stderr("(paced) starts its subtasks afresh: its "
                                "collect sink's rows went to the lost "
                                "JobMaster",
                                30s));
  auto waited = run_weir({"wait", "-m", address, id}, 60s);
  CHECK(waited.exit_code == 0);
  std::vector<std::string> expected;
  for (int k = 0; k < 5; ++k)
    expected.push_back(fmt::format("key-{}\t600", k));
  CHECK(sorted_lines(waited.out) == expected);
  // The job that had finished before the crash did not run again.
  CHECK(master->stderr_so_far().find("(done) recovered") == std::string::npos);
  auto list = run_weir({"list", "-m", address, "-a"}, 30s);
  CHECK(list.out.find(" : done (FINISHED) ") != std::string::npos);
  auto unknown = run_weir({"wait", "-m", address, std::string(32, 'b')}, 30s);
  CHECK(unknown.exit_code == 2);
  worker.signal(SIGTERM);
  worker.finish(30s);
  master->signal(SIGTERM);
  master->finish(30s);
}

TEST_CASE("a standby jobmanager takes over when the leader dies") {
  temp_dir dir;
  std::string weir = std::getenv("WEIR_BIN");
  auto state = dir.file("state");
  auto leader = std::make_unique<running_process>(std::vector<std::string>{
    weir, "jobmanager", "--port", "0", "--state-dir", state, any_rest_port});
  auto first = listening_address(*leader);
  REQUIRE_FALSE(first.empty());
  auto first_rest = rest_address(*leader);
  running_process standby{{weir, "jobmanager", "--port", "0", "--state-dir",
                           state, any_rest_port}};
  REQUIRE(standby.wait_for_stderr("standby: another jobmanager holds " + state
                                    + "; waiting to take over",
                                  30s));
  // The standby's port is not known before it leads; give workers and
  // clients both addresses once it is.
  leader->signal(SIGKILL);
  leader->finish(30s);
  REQUIRE(standby.wait_for_stderr("took over " + state + " as the leader", 30s));
  auto second = listening_address(standby);
  REQUIRE_FALSE(second.empty());
  auto both = first + "," + second;
  running_process worker{{weir, "taskmanager", "-m", both, "--id", "tm-1"}};
  REQUIRE(standby.wait_for_stderr("TaskExecutor tm-1 registered", 30s));
  // Clients reach whichever REST API answers: only a leader serves one.
  auto both_rest = first_rest + "," + rest_address(standby);
  auto r = run_weir({"run", "-m", both_rest, "examples/collect.json", "--to",
                     "4"},
                    60s);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "2\n4\n");
  worker.signal(SIGTERM);
  worker.finish(30s);
  standby.signal(SIGTERM);
  CHECK(standby.finish(30s).exit_code == 0);
}

TEST_CASE("SIGTERM ends a jobmanager whose client stopped reading") {
  one_worker_cluster c{{"-Dheartbeat.timeout=10min"}};
  auto& master = *c.master;
  auto client = client_not_reading(master, c.rest, c.dir);
  // Before, the end waited for the client to take what was queued for it:
  // the jobmanager, no longer listening, went on running and ignored
  // further signals for as long as the client did not read.
  master.signal(SIGTERM);
  auto r = master.finish(5s);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 0);
  client->signal(SIGCONT);
  client->finish(30s);
}



TEST_CASE("a busy TaskExecutor is not declared lost") {
  // Its subtasks keep both cores saturated for several seconds (longer
  // than heartbeat.timeout, at the defaults); heartbeats go ahead of data,
  // so the job runs through without a loss and without a restart.
  one_worker_cluster c;
  auto& master = *c.master;
  auto& address = c.rest;
  const int64_t n = 600000000;
  auto spec = c.dir.write("busy.json", keyed_sum_spec("busy", 2, n, 7));
  auto r = run_weir({"run", "-m", address, spec}, 300s);
  CHECK(r.exit_code == 0);
  // Sum of i ≡ k (mod 7) over 1..n, in closed form.
  std::vector<std::string> expected;
  for (int64_t k = 0; k < 7; ++k) {
    auto first = k == 0 ? 7 : k;
    auto count = (n - first) / 7 + 1;
    auto last = first + (count - 1) * 7;
    expected.push_back(fmt::format("{}\t{}", k, count * (first + last) / 2));
  }
  std::sort(expected.begin(), expected.end());
  CHECK(sorted_lines(r.out) == expected);
  auto runtime = r.err.substr(r.err.find("Job Runtime: "));
  MESSAGE("busy job: " << runtime);
  CHECK(master.stderr_so_far().find(" lost") == std::string::npos);
  CHECK(master.stderr_so_far().find("restarts in") == std::string::npos);
}

namespace {

/// generator (6000 records at 2000/s per subtask, 7 keys) → fails once
/// after 1500 records per subtask → count → `sink`, with checkpoints every
/// 200 ms and fixed-delay restarts.
std::string checkpointed_spec(const temp_dir& dir, const std::string& sink) {
  return dir.write("checkpointed.json", fmt::format(R"({{
    "name": "checkpointed", "parallelism": 2,
    "config": {{"execution.checkpointing.interval": "200 ms",
               "restart-strategy.type": "fixed-delay",
               "restart-strategy.fixed-delay.attempts": 3,
               "restart-strategy.fixed-delay.delay": "50 ms"}},
    "vertices": [
      {{"id": "events", "operator": "generator", "params": {{"count": 6000, "rate": 2000, "keys": 7}}}},
      {{"id": "flaky", "operator": "map", "params": {{"function": "fail_once", "marker": "{}", "after": 1500}}}},
      {{"id": "counts", "operator": "count"}},
      {{"id": "out", "operator": "{}", "parallelism": 1{}}}],
    "edges": [
      {{"from": "events", "to": "flaky", "partitioning": "forward"}},
      {{"from": "flaky", "to": "counts", "partitioning": "hash"}},
      {{"from": "counts", "to": "out", "partitioning": "rebalance"}}]}})",
                                                    dir.file("marker"), sink,
                                                    sink == "text_file"
                                                      ? R"(, "params": {"path": ")"
                                                          + dir.file("out.txt") + "\"}"
                                                      : std::string{}));
}

std::vector<std::string> expected_counts_6000() {
  std::vector<std::string> lines;
  for (int k = 0; k < 7; ++k)
    lines.push_back(fmt::format("key-{}\t{}", k, 6000 / 7 + (k < 6000 % 7 ? 1 : 0)));
  std::sort(lines.begin(), lines.end());
  return lines;
}

} // namespace

TEST_CASE("a failed job resumes from its latest checkpoint, results exact") {
  one_worker_cluster c;
  auto r = run_weir({"run", "-m", c.rest, checkpointed_spec(c.dir, "collect")});
  CHECK(r.exit_code == 0);
  CHECK(exists(c.dir.file("marker"))); // the failure did happen
  CHECK(sorted_lines(r.out) == expected_counts_6000());
  REQUIRE(c.master->wait_for_stderr("(checkpointed) FINISHED", 30s));
  auto& log = c.master->stderr_so_far();
  CHECK(log.find("(checkpointed) completed checkpoint 1 (") != std::string::npos);
  CHECK(log.find("(checkpointed) resumes from checkpoint ") != std::string::npos);
}

TEST_CASE("checkpoint state goes to checkpoint storage: the JobMaster keeps "
          "and stores handles, a failover restores from the files") {
  // 24000 distinct keys counted by two subtasks: each subtask's state is
  // far above the 20 KiB kept inline.
  one_worker_cluster c;
  auto spec = c.dir.write("handles.json", fmt::format(R"({{
    "name": "handles", "parallelism": 2,
    "config": {{"execution.checkpointing.interval": "200 ms",
               "restart-strategy.type": "fixed-delay",
               "restart-strategy.fixed-delay.attempts": 3,
               "restart-strategy.fixed-delay.delay": "50 ms"}},
    "vertices": [
      {{"id": "events", "operator": "generator", "params": {{"count": 24000, "rate": 4000, "keys": 24000}}}},
      {{"id": "flaky", "operator": "map", "params": {{"function": "fail_once", "marker": "{}", "after": 8000}}}},
      {{"id": "counts", "operator": "count"}},
      {{"id": "out", "operator": "collect", "parallelism": 1}}],
    "edges": [
      {{"from": "events", "to": "flaky", "partitioning": "forward"}},
      {{"from": "flaky", "to": "counts", "partitioning": "hash"}},
      {{"from": "counts", "to": "out", "partitioning": "rebalance"}}]}})",
                                                      c.dir.file("marker")));
  auto r = run_weir({"run", "-m", c.rest, spec}, 120s);
  CHECK(r.exit_code == 0);
  CHECK(exists(c.dir.file("marker"))); // the failure did happen
  std::vector<std::string> expected;
  for (int k = 0; k < 24000; ++k)
    expected.push_back(fmt::format("key-{}\t1", k));
  std::sort(expected.begin(), expected.end());
  CHECK(sorted_lines(r.out) == expected);
  REQUIRE(c.master->wait_for_stderr("(handles) FINISHED", 30s));
  CHECK(c.master->stderr_so_far().find("(handles) resumes from checkpoint ")
        != std::string::npos);
  // The stored checkpoint files hold handles; the state is in files of
  // its own under chk-<n>.d/.
  namespace fs = std::filesystem;
  uintmax_t stored = 0;
  uintmax_t largest_state = 0;
  for (auto& e : fs::recursive_directory_iterator(c.dir.file("state/checkpoints"))) {
    auto name = e.path().filename().string();
    if (e.is_regular_file() && name.rfind("chk-", 0) == 0) {
      ++stored;
      CHECK(e.file_size() < 4096);
    }
    if (e.is_regular_file() && e.path().extension() == ".state")
      largest_state = std::max(largest_state, e.file_size());
  }
  CHECK(stored >= 1);
  CHECK(largest_state > 20 * 1024);
}

TEST_CASE("a job whose sink cannot resume starts over, results exact") {
  // A plain text_file sink rewrites its file: the job restarts from its
  // sources rather than from a checkpoint.
  one_worker_cluster c;
  auto r = run_weir({"run", "-m", c.rest, checkpointed_spec(c.dir, "text_file")});
  CHECK(r.exit_code == 0);
  CHECK(sorted_lines(read_file(c.dir.file("out.txt"))) == expected_counts_6000());
  REQUIRE(c.master->wait_for_stderr("(checkpointed) FINISHED", 30s));
  CHECK(c.master->stderr_so_far().find("resumes from checkpoint")
        == std::string::npos);
}


TEST_CASE("an exactly-once file sink commits every record once across a "
          "failover") {
  one_worker_cluster c;
  auto out = c.dir.file("out");
  auto spec = c.dir.write("eo.json", fmt::format(R"({{
    "name": "exactly-once", "parallelism": 2,
    "config": {{"execution.checkpointing.interval": "100 ms",
               "restart-strategy.type": "fixed-delay",
               "restart-strategy.fixed-delay.attempts": 3,
               "restart-strategy.fixed-delay.delay": "50 ms"}},
    "vertices": [
      {{"id": "events", "operator": "generator", "params": {{"count": 6000, "rate": 2000, "keys": 7}}}},
      {{"id": "flaky", "operator": "map", "params": {{"function": "fail_once", "marker": "{}", "after": 1500}}}},
      {{"id": "out", "operator": "text_file", "params": {{"path": "{}", "delivery": "exactly-once"}}}}],
    "edges": [
      {{"from": "events", "to": "flaky", "partitioning": "forward"}},
      {{"from": "flaky", "to": "out", "partitioning": "rebalance"}}]}})",
                                                   c.dir.file("marker"), out));
  auto r = run_weir({"run", "-m", c.rest, spec});
  CHECK(r.exit_code == 0);
  CHECK(exists(c.dir.file("marker")));
  CHECK(committed_lines(out) == generated_lines(6000, 7));
  REQUIRE(c.master->wait_for_stderr("(exactly-once) FINISHED", 30s));
  CHECK(c.master->stderr_so_far().find("(exactly-once) resumes from checkpoint ")
        != std::string::npos);
}

namespace {

/// A job with an exactly-once sink and checkpoints every 100 ms (3
/// retained); the jobmanager is killed after checkpoint 5 and a new one
/// starts on the same state directory (after `damage` had its way with the
/// stored checkpoints). Returns the new jobmanager's log once the job ended;
/// the committed output must be exact either way.
template <class Damage>
std::string resume_after_master_kill(Damage damage) {
  temp_dir dir;
  std::string weir = std::getenv("WEIR_BIN");
  auto state = dir.file("state");
  // The worker cancels its subtasks when it loses the jobmanager: the job
  // resumes from what is stored (rescale_test.cpp has the adoption).
  restartable_jobmanager master{state,
                                {"-Dstate.checkpoints.num-retained=3",
                                 "-Djobmanager.failover.reconcile-timeout=0"}};
  auto& address = master.address;
  running_process worker{{weir, "taskmanager", "-m", address, "--slots", "2",
                          "--id", "worker",
                          "-Dtaskmanager.failover.keep-tasks-timeout=0"}};
  REQUIRE(master->wait_for_stderr("TaskExecutor worker registered", 30s));
  auto out = dir.file("out");
  auto spec = dir.write("stored.json", fmt::format(R"({{
    "name": "stored", "parallelism": 2,
    "config": {{"execution.checkpointing.interval": "100 ms"}},
    "vertices": [
      {{"id": "events", "operator": "generator", "params": {{"count": 8000, "rate": 2000, "keys": 7}}}},
      {{"id": "out", "operator": "text_file", "params": {{"path": "{}", "delivery": "exactly-once"}}}}],
    "edges": [{{"from": "events", "to": "out", "partitioning": "rebalance"}}]}})",
                                                   out));
  auto submitted = run_weir({"run", "-m", master.rest, "-d", spec});
  REQUIRE(submitted.exit_code == 0);
  auto id = lines_of(submitted.out).back();
  REQUIRE(master->wait_for_stderr("(stored) completed checkpoint 5 ", 30s));
  master.kill();
  damage(state + "/checkpoints/" + id);
  master.restart();
  auto r = run_weir({"wait", "-m", master.rest, id}, 60s);
  CHECK(r.exit_code == 0);
  CHECK(committed_lines(out) == generated_lines(8000, 7));
  REQUIRE(master->wait_for_stderr("(stored) FINISHED", 30s));
  return master->stderr_so_far();
}

/// The checkpoint files of a job's directory, newest first.
std::vector<std::string> checkpoint_files(const std::string& dir) {
  std::vector<std::pair<int64_t, std::string>> files;
  for (auto& e : std::filesystem::directory_iterator(dir)) {
    auto name = e.path().filename().string();
    if (name.rfind("chk-", 0) == 0)
      files.emplace_back(std::stoll(name.substr(4)), e.path().string());
  }
  std::sort(files.rbegin(), files.rend());
  std::vector<std::string> result;
  for (auto& f : files)
    result.push_back(f.second);
  return result;
}

} // namespace

/// The checkpoint a log says the job resumed from (-1: none).
int64_t resumed_from(const std::string& log) {
  const std::string what = "(stored) resumes from checkpoint ";
  auto at = log.find(what);
  return at == std::string::npos ? -1 : std::stoll(log.substr(at + what.size()));
}

int64_t number_of(const std::string& file) {
  return std::stoll(file.substr(file.rfind("chk-") + 4));
}

TEST_CASE("a restarted jobmanager resumes a job from its stored checkpoint") {
  auto log = resume_after_master_kill([](const std::string&) {});
  CHECK(resumed_from(log) >= 4); // at least the one before checkpoint 5
}

TEST_CASE("a corrupt stored checkpoint is reported and an older one used") {
  // The two newest files (the newest may not be listed yet when the kill
  // came between writing it and recording it) are damaged.
  std::vector<std::string> files;
  auto log = resume_after_master_kill([&](const std::string& dir) {
    files = checkpoint_files(dir);
    REQUIRE(files.size() >= 3);
    for (int i = 0; i < 2; ++i)
      std::ofstream{files[static_cast<size_t>(i)], std::ios::trunc} << "garbage";
  });
  CHECK(log.find("(stored) skipped a stored checkpoint: checkpoint "
                 + std::to_string(number_of(files[1])) + " of job ")
        != std::string::npos);
  CHECK(log.find(files[1] + ": not a weir checkpoint or truncated")
        != std::string::npos);
  auto from = resumed_from(log);
  CHECK(from >= 1);
  CHECK(from < number_of(files[1]));
}

TEST_CASE("a job whose sources end at different times finishes with "
          "checkpoints on") {
  // `few` ends after about 0.1 s, `many` after 0.75 s, checkpoints every
  // 50 ms: the count aligns barriers while both run, and must not wait for a
  // barrier of the ended one.
  temp_dir dir;
  auto spec = dir.write("uneven.json", R"({
    "name": "uneven",
    "config": {"execution.checkpointing.interval": "50 ms"},
    "vertices": [
      {"id": "few", "operator": "generator", "params": {"count": 200, "rate": 2000, "keys": 2}},
      {"id": "many", "operator": "generator", "params": {"count": 1500, "rate": 2000, "keys": 2}},
      {"id": "counts", "operator": "count", "parallelism": 2},
      {"id": "out", "operator": "collect"}],
    "edges": [
      {"from": "few", "to": "counts", "partitioning": "hash"},
      {"from": "many", "to": "counts", "partitioning": "hash"},
      {"from": "counts", "to": "out", "partitioning": "rebalance"}]})");
  auto r = run_weir({"run", spec}, 60s);
  CHECK(r.exit_code == 0);
  CHECK(sorted_lines(r.out)
        == std::vector<std::string>{"key-0\t850", "key-1\t850"});
}
