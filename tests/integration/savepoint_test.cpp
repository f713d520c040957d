// Savepoints and exactly-once state: an unbounded keyed count with an
// exactly-once sink survives killed workers, stops with a savepoint and
// goes on from it in a new job.
#include <doctest/doctest.h>

#include <csignal>
#include <map>

#include <fmt/format.h>

#include "cluster_fixture.hpp"
#include "process.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

/// `config` keys choosing the state backend: heap, or RocksDB with
/// incremental checkpoints.
const std::string heap_state = R"("state.backend.type": "hashmap")";
const std::string rocksdb_state
  = R"("state.backend.type": "rocksdb", "execution.checkpointing.incremental": true)";

/// generator (`count`: -1 unbounded, `rate` per subtask, 5 keys) → count →
/// `sink` directory (exactly-once), parallelism 2, checkpoints every 200 ms.
std::string counts_spec(const temp_dir& dir, const std::string& name,
                        int64_t count, int64_t rate, const std::string& sink,
                        bool with_counts = true,
                        const std::string& backend = heap_state) {
  auto counts = with_counts
                  ? std::string{R"({"id": "counts", "operator": "count"},)"}
                  : std::string{};
  auto edges = with_counts
                 ? std::string{R"({"from": "events", "to": "counts", "partitioning": "hash"},
      {"from": "counts", "to": "out", "partitioning": "forward"})"}
                 : std::string{R"({"from": "events", "to": "out", "partitioning": "forward"})"};
  return dir.write(name + ".json", fmt::format(R"({{
    "name": "{}", "parallelism": 2,
    "config": {{"execution.checkpointing.interval": "200 ms", {},
               "restart-strategy.type": "fixed-delay",
               "restart-strategy.fixed-delay.attempts": 100,
               "restart-strategy.fixed-delay.delay": "50 ms"}},
    "vertices": [
      {{"id": "events", "operator": "generator", "params": {{"count": {}, "rate": {}, "keys": 5}}}},
      {}
      {{"id": "out", "operator": "text_file", "params": {{"path": "{}", "delivery": "exactly-once"}}}}],
    "edges": [{}]}})",
                                               name, backend, count, rate,
                                               counts, sink, edges));
}

/// The last count of every key in committed keyed-count output.
std::map<std::string, int64_t> last_counts(const std::vector<std::string>& lines) {
  std::map<std::string, int64_t> result;
  for (auto& l : lines) {
    auto tab = l.find('\t');
    int64_t n = std::stoll(l.substr(tab + 1));
    auto& v = result[l.substr(0, tab)];
    v = std::max(v, n);
  }
  return result;
}

/// The job id `weir run -d` printed.
std::string detached(const std::vector<std::string>& args) {
  auto r = run_weir(args);
  REQUIRE(r.exit_code == 0);
  return lines_of(r.out).back();
}

} // namespace

namespace {

/// The exactly-once scenario with state on `backend`: an unbounded keyed
/// count survives two killed workers, stops with a savepoint, and a bounded
/// job resumes from it with exact counts.
void stop_and_resume_exactly_once(const std::string& backend) {
  one_worker_cluster c;
  auto& weir = c.weir;
  running_process second{{weir, "taskmanager", "-m", c.address, "--slots", "2",
                          "--id", "second"}};
  REQUIRE(c.master->wait_for_stderr("TaskExecutor second registered", 30s));
  // An unbounded job; its workers are killed (and started again) twice.
  auto first_out = c.dir.file("first");
  auto id = detached({"run", "-m", c.rest, "-d",
                      counts_spec(c.dir, "endless", -1, 1000, first_out, true,
                                  backend)});
  auto victim = std::make_unique<running_process>(std::vector<std::string>{
    weir, "taskmanager", "-m", c.address, "--slots", "2", "--id", "victim"});
  REQUIRE(c.master->wait_for_stderr("TaskExecutor victim registered", 30s));
  for (int round = 1; round <= 2; ++round) {
    REQUIRE(c.master->wait_for_stderr(
      fmt::format("(endless) completed checkpoint {} ", round * 4), 30s));
    c.worker->signal(SIGKILL);
    c.worker->finish(10s);
    REQUIRE(c.master->wait_for_stderr("TaskExecutor worker lost", 30s));
    c.worker = std::make_unique<running_process>(std::vector<std::string>{
      weir, "taskmanager", "-m", c.address, "--slots", "2", "--id", "worker"});
  }
  REQUIRE(c.master->wait_for_stderr("(endless) resumes from checkpoint ", 30s));
  REQUIRE(c.master->wait_for_stderr("(endless) completed checkpoint 12 ", 30s));
  // As in Flink, a stop that meets a failover (a late consequence of the
  // kills above) is refused and the job goes on: stop again.
  process_result stopped;
  for (int attempt = 0; attempt < 5; ++attempt) {
    stopped = run_weir({"stop", "-m", c.rest, id, "--savepointPath",
                        c.dir.file("savepoints")});
    if (stopped.err.find(": not stopped (") == std::string::npos)
      break;
  }
  INFO("weir stop said: " << stopped.err);
  REQUIRE(stopped.exit_code == 0);
  const std::string prefix = "Savepoint completed. Path: ";
  auto at = stopped.out.find(prefix);
  REQUIRE(at != std::string::npos);
  auto savepoint = stopped.out.substr(at + prefix.size());
  savepoint = savepoint.substr(0, savepoint.find('\n'));
  CHECK(exists(savepoint));
  // Whatever the first job committed is a prefix of the truth: no count
  // beyond what the generator made, every key counted.
  auto before = last_counts(committed_lines(first_out));
  CHECK(before.size() == 5);
  // The same graph, now bounded (20,000 records in all), from the
  // savepoint: the final counts are exact, so no record was lost or
  // counted twice across the kills, the stop and the restore.
  auto second_out = c.dir.file("second");
  auto r = run_weir({"run", "-m", c.rest, "-s", savepoint,
                     counts_spec(c.dir, "bounded", 20000, 0, second_out, true,
                                 backend)});
  REQUIRE(r.exit_code == 0);
  auto after = last_counts(committed_lines(second_out));
  std::map<std::string, int64_t> expected;
  for (int k = 0; k < 5; ++k)
    expected[fmt::format("key-{}", k)] = 4000;
  CHECK(after == expected);
  for (auto& [key, n] : before)
    CHECK(n <= 4000);
  REQUIRE(c.master->wait_for_stderr("(bounded) starts from savepoint ", 30s));
}

} // namespace

TEST_CASE("stop with a savepoint, resume in a new job: counts stay exact "
          "(hashmap state)") {
  stop_and_resume_exactly_once(heap_state);
}

TEST_CASE("stop with a savepoint, resume in a new job: counts stay exact "
          "(RocksDB state, incremental checkpoints)") {
  stop_and_resume_exactly_once(rocksdb_state);
}

namespace {

/// Runs the unbounded keyed count as job `name` at parallelism `p` (from
/// `savepoint` unless it is empty, into directory `out`) until it
/// completed 3 checkpoints, then stops it with a savepoint, whose path it
/// returns.
std::string run_then_stop(one_worker_cluster& c, const std::string& backend,
                          const std::string& name, int p,
                          const std::string& savepoint,
                          const std::string& out) {
  std::vector<std::string> args{"run", "-m", c.rest, "-d", "-p",
                                std::to_string(p)};
  if (!savepoint.empty()) {
    args.push_back("-s");
    args.push_back(savepoint);
  }
  args.push_back(counts_spec(c.dir, name, -1, 1000, out, true, backend));
  auto id = detached(args);
  REQUIRE(c.master->wait_for_stderr(
    fmt::format("({}) completed checkpoint 3 ", name), 60s));
  return stop_with_savepoint(c.rest, id, c.dir.file("savepoints"));
}

/// The keyed count rescaled 2 → 3 → 1 → 4 through savepoints, its state on
/// `backend`: the last job, bounded, counts every key exactly.
void rescale_exactly_once(const std::string& backend) {
  one_worker_cluster c;
  running_process second{{c.weir, "taskmanager", "-m", c.address, "--slots",
                          "2", "--id", "second"}};
  REQUIRE(c.master->wait_for_stderr("TaskExecutor second registered", 30s));
  // Every job writes into one directory, as a rescaled job does.
  auto out = c.dir.file("out");
  auto sp = run_then_stop(c, backend, "p2", 2, "", out);
  sp = run_then_stop(c, backend, "p3", 3, sp, out);
  auto third_subtask = read_file(out + "/part-2-0");
  sp = run_then_stop(c, backend, "p1", 1, sp, out);
  // 100,000 records in all (20,000 per key), now at parallelism 4.
  auto r = run_weir({"run", "-m", c.rest, "-p", "4", "-s", sp,
                     counts_spec(c.dir, "p4", 100000, 0, out, true, backend)});
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::map<std::string, int64_t> expected;
  for (int k = 0; k < 5; ++k)
    expected[fmt::format("key-{}", k)] = 20000;
  CHECK(last_counts(committed_lines(out)) == expected);
  for (auto* job : {"p3", "p1", "p4"})
    CHECK(c.master->wait_for_stderr(
      fmt::format("({}) starts from savepoint ", job), 30s));
  // Each job ran at its parallelism, and none touched what an earlier one
  // committed: the file of subtask 2 at parallelism 3 is as it was.
  CHECK_FALSE(third_subtask.empty());
  CHECK(read_file(out + "/part-2-0") == third_subtask);
  CHECK(exists(out + "/part-3-0"));
}

} // namespace

TEST_CASE("a keyed job rescales 2 -> 3 -> 1 -> 4 through savepoints, "
          "exactly once (hashmap state)") {
  rescale_exactly_once(heap_state);
}

TEST_CASE("a keyed job rescales 2 -> 3 -> 1 -> 4 through savepoints, "
          "exactly once (RocksDB state, incremental checkpoints)") {
  rescale_exactly_once(rocksdb_state);
}

TEST_CASE("a savepoint refuses a parallelism above its key groups") {
  one_worker_cluster c;
  auto sp = run_then_stop(c, heap_state, "small", 2, "", c.dir.file("small"));
  auto r = run_weir({"run", "-m", c.rest, "-p", "200", "-s", sp,
                     counts_spec(c.dir, "huge", -1, 1000, c.dir.file("huge"))});
  CHECK(r.exit_code == 2);
  CHECK(r.err
        == "weir run: -s: savepoint '" + sp + "' holds vertex 'counts' in 128 key "
           "groups (its max parallelism), the job runs it at parallelism 200\n");
}

TEST_CASE("state of a vertex the new job lacks is refused unless -n") {
  one_worker_cluster c;
  auto id = detached({"run", "-m", c.rest, "-d",
                      counts_spec(c.dir, "endless", -1, 1000, c.dir.file("a"))});
  REQUIRE(c.master->wait_for_stderr("(endless) completed checkpoint 2 ", 30s));
  auto stopped = run_weir({"savepoint", "-m", c.rest, id,
                           c.dir.file("savepoints")});
  INFO("weir stop said: " << stopped.err);
  REQUIRE(stopped.exit_code == 0);
  auto savepoint = stopped.out.substr(stopped.out.find("Path: ") + 6);
  savepoint = savepoint.substr(0, savepoint.find('\n'));
  run_weir({"cancel", "-m", c.rest, id});
  // No `counts` vertex in this job.
  auto spec = counts_spec(c.dir, "plain", 100, 0, c.dir.file("b"), false);
  // The client reads the savepoint and refuses before submitting.
  auto refused = run_weir({"run", "-m", c.rest, "-s", savepoint, spec});
  CHECK(refused.exit_code == 2);
  CHECK(refused.err == "weir run: -s: savepoint '" + savepoint
                         + "' holds state of vertex 'counts', which this job "
                           "does not have (-n/--allowNonRestoredState skips "
                           "it)\n");
  auto allowed = run_weir({"run", "-m", c.rest, "-s", savepoint, "-n", spec});
  CHECK(allowed.exit_code == 0);
  // Disposal, and a path that is not a savepoint.
  auto disposed = run_weir({"savepoint", "-d", savepoint});
  CHECK(disposed.exit_code == 0);
  CHECK_FALSE(exists(savepoint));
  auto missing = run_weir({"run", "-m", c.rest, "-s", savepoint, spec});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err.find("weir run: -s: cannot read '" + savepoint + "'")
        == 0);
}

TEST_CASE("a savepoint of one cluster starts a job on another (RocksDB "
          "state there, heap state here)") {
  one_worker_cluster a;
  auto id = detached({"run", "-m", a.rest, "-d",
                      counts_spec(a.dir, "endless", -1, 1000, a.dir.file("a"),
                                  true, rocksdb_state)});
  REQUIRE(a.master->wait_for_stderr("(endless) completed checkpoint 2 ", 30s));
  auto stopped = run_weir({"stop", "-m", a.rest, id, "--savepointPath",
                           a.dir.file("savepoints")});
  INFO("weir stop said: " << stopped.err);
  REQUIRE(stopped.exit_code == 0);
  auto savepoint = stopped.out.substr(stopped.out.find("Path: ") + 6);
  savepoint = savepoint.substr(0, savepoint.find('\n'));
  one_worker_cluster b{{"-Dhigh-availability.cluster-id=other"},
                       {"-Dhigh-availability.cluster-id=other"}};
  auto out = b.dir.file("b");
  auto r = run_weir({"run", "-m", b.rest, "-Dhigh-availability.cluster-id=other",
                     "-s", savepoint,
                     counts_spec(b.dir, "bounded", 20000, 0, out)});
  REQUIRE(r.exit_code == 0);
  std::map<std::string, int64_t> expected;
  for (int k = 0; k < 5; ++k)
    expected[fmt::format("key-{}", k)] = 4000;
  CHECK(last_counts(committed_lines(out)) == expected);
  CHECK(b.master->wait_for_stderr("(bounded) starts from savepoint ", 30s));
}

TEST_CASE("weir run -r resumes from the newest retained checkpoint") {
  one_worker_cluster c;
  auto id = detached({"run", "-m", c.rest, "-d",
                      counts_spec(c.dir, "endless", -1, 1000, c.dir.file("a"))});
  REQUIRE(c.master->wait_for_stderr("(endless) completed checkpoint 3 ", 30s));
  CHECK(run_weir({"cancel", "-m", c.rest, id}).exit_code == 0);
  auto out = c.dir.file("b");
  auto r = run_weir({"run", "-m", c.rest, "-r",
                     c.dir.file("state") + "/checkpoints",
                     counts_spec(c.dir, "bounded", 20000, 0, out)});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("Resuming from checkpoint " + c.dir.file("state")
                   + "/checkpoints/" + id + "/chk-")
        == 0);
  std::map<std::string, int64_t> expected;
  for (int k = 0; k < 5; ++k)
    expected[fmt::format("key-{}", k)] = 4000;
  CHECK(last_counts(committed_lines(out)) == expected);
  auto none = run_weir({"run", "-m", c.rest, "-r", c.dir.file("a"),
                        counts_spec(c.dir, "bounded", 20000, 0, out)});
  CHECK(none.exit_code == 2);
  CHECK(none.err == "weir run: -r: no retained checkpoint under '"
                      + c.dir.file("a") + "'\n");
}

TEST_CASE("savepoint and stop without a directory use the job's, else the "
          "jobmanager's savepoint-dir") {
  temp_dir dirs;
  auto cluster_dir = dirs.file("cluster-savepoints");
  session_cluster c{{"-Dexecution.checkpointing.savepoint-dir=" + cluster_dir}};
  c.add_worker("tm-1", 4);
  auto spec = counts_spec(c.dir, "unbounded", -1, 2000, c.dir.file("out"));
  auto run = c.client({"run", "-d", spec});
  REQUIRE(run.exit_code == 0);
  auto id = run.out.substr(0, 32);
  // The client sets no directory: the jobmanager's applies.
  auto sp = c.client({"savepoint", id});
  CHECK(sp.exit_code == 0);
  CHECK(sp.out.find("Savepoint completed. Path: " + cluster_dir + "/")
        == 0);
  // A job that carries its own directory uses that one.
  auto job_dir = dirs.file("job-savepoints");
  auto own = c.client({"run", "-d", "--jobid",
                       "00000000000000000000000000000002",
                       "-Dexecution.checkpointing.savepoint-dir=" + job_dir,
                       counts_spec(c.dir, "own", -1, 2000, c.dir.file("own"))});
  REQUIRE(own.exit_code == 0);
  auto stop = c.client({"stop", "00000000000000000000000000000002"});
  CHECK(stop.exit_code == 0);
  CHECK(stop.out.find("Savepoint completed. Path: " + job_dir + "/")
        != std::string::npos);
  CHECK(c.client({"cancel", id}).exit_code == 0);
}

TEST_CASE("a savepoint with no directory anywhere is refused with the keys") {
  session_cluster c;
  c.add_worker("tm-1", 4);
  auto run = c.client({"run", "-d",
                       counts_spec(c.dir, "unbounded", -1, 2000,
                                   c.dir.file("out"))});
  REQUIRE(run.exit_code == 0);
  auto id = run.out.substr(0, 32);
  auto sp = c.client({"savepoint", id});
  CHECK(sp.exit_code == 2);
  CHECK(sp.err == "weir savepoint: no savepoint directory: give one, or set "
                  "execution.checkpointing.savepoint-dir for the job or the "
                  "jobmanager\n");
  CHECK(c.client({"cancel", id}).exit_code == 0);
}
