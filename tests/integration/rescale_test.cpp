// Rescaling a running job in place (`weir rescale`, Flink's PATCH
// /jobs/{id}/rescaling): a keyed count with an exactly-once sink goes
// 2 -> 3 -> 1 -> 4 while it runs and still counts every key exactly;
// refusals leave the job running as it was.
#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <regex>

#include <fmt/format.h>

#include "cluster_fixture.hpp"
#include "process.hpp"
#include "rest_client.hpp"

using namespace weir::test;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

/// generator (`count` records in all, 5 keys, 1000 a second per subtask)
/// → count → exactly-once text_file at `out`, parallelism 2, its state on
/// `backend`, a checkpoint every 200 ms.
std::string counts_spec(temp_dir& dir, const std::string& name, int64_t count,
                        const std::string& out, const std::string& backend,
                        const std::string& delivery = "exactly-once") {
  return dir.write(name + ".json", fmt::format(R"({{
    "name": "{}", "parallelism": 2,
    "config": {{"execution.checkpointing.interval": "200 ms", {}}},
    "vertices": [
      {{"id": "events", "operator": "generator", "params": {{"count": {}, "rate": 1000, "keys": 5}}}},
      {{"id": "counts", "operator": "count"}},
      {{"id": "out", "operator": "text_file", "params": {{"path": "{}", "delivery": "{}"}}}}],
    "edges": [{{"from": "events", "to": "counts", "partitioning": "hash"}},
              {{"from": "counts", "to": "out", "partitioning": "forward"}}]}})",
                                               name, backend, count, out,
                                               delivery));
}

/// The last count of every key in committed keyed-count output.
std::map<std::string, int64_t> last_counts(const std::vector<std::string>& lines) {
  std::map<std::string, int64_t> result;
  for (auto& l : lines) {
    auto tab = l.find('\t');
    auto& v = result[l.substr(0, tab)];
    v = std::max<int64_t>(v, std::stoll(l.substr(tab + 1)));
  }
  return result;
}

/// The id of the checkpoint the JobMaster of job `name` took for its
/// `nth` rescale (1 for the first), from its log; 0 if none yet.
int64_t rescale_checkpoint(running_process& jm, const std::string& name,
                           int nth) {
  std::regex taken{"\\(" + name + "\\) rescales to parallelism [0-9]+: takes "
                   "checkpoint ([0-9]+)"};
  auto log = jm.stderr_so_far();
  int seen = 0;
  for (std::sregex_iterator i{log.begin(), log.end(), taken}, end; i != end;
       ++i)
    if (++seen == nth)
      return std::stoll((*i)[1]);
  return 0;
}

/// Every vertex's parallelism in the REST API's view of job `id`.
std::vector<int> parallelisms(const std::string& url, const std::string& id) {
  std::vector<int> out;
  auto job = get(url, "/jobs/" + id).body;
  for (auto& v : job["vertices"])
    out.push_back(v["parallelism"].get<int>());
  return out;
}

/// Waits for job `id` (40,000 records) to end, then checks that its
/// committed output in `out` counted every key exactly 8,000 times.
void expect_exact_counts(session_cluster& c, const std::string& id,
                         const std::string& out) {
  auto waited = c.client({"wait", id});
  INFO(waited.out, waited.err);
  REQUIRE(waited.exit_code == 0);
  std::map<std::string, int64_t> expected;
  for (int k = 0; k < 5; ++k)
    expected[fmt::format("key-{}", k)] = 8000;
  CHECK(last_counts(committed_lines(out)) == expected);
}

/// The keyed count rescaled 2 → 3 → 1 → 4 while it runs, by `weir rescale`
/// and by Flink's REST route; state on `backend`.
void rescale_in_place(const std::string& backend) {
  session_cluster c;
  c.add_worker("tm-1", 2);
  c.add_worker("tm-2", 2);
  auto url = rest_url(*c.jobmanager);
  auto out = c.dir.file("out");
  // 40,000 records: 8,000 per key.
  auto run = c.client({"run", "-d", counts_spec(c.dir, "counts", 40000, out,
                                                 backend)});
  REQUIRE(run.exit_code == 0);
  auto id = lines_of(run.out).back();
  auto& jm = *c.jobmanager;
  REQUIRE(jm.wait_for_stderr("(counts) completed checkpoint 2 ", 30s));
  int nth = 0;
  // Waits until the job completed a checkpoint at its new parallelism.
  auto settled = [&](int p) {
    ++nth;
    REQUIRE(jm.wait_for_stderr(
      fmt::format("(counts) is rescaled to parallelism {}: every subtask runs",
                  p),
      30s));
    auto taken = rescale_checkpoint(jm, "counts", nth);
    REQUIRE(taken > 0);
    REQUIRE(jm.wait_for_stderr(
      fmt::format("(counts) completed checkpoint {} ", taken + 1), 30s));
  };
  auto to3 = c.client({"rescale", id, "-p", "3"});
  INFO(to3.err);
  REQUIRE(to3.exit_code == 0);
  CHECK(to3.out == fmt::format("Rescaling job {0} to parallelism 3.\nJob {0} "
                               "runs at parallelism 3.\n",
                               id));
  CHECK(parallelisms(url, id) == std::vector<int>{3, 3, 3});
  settled(3);
  // Flink's route: a trigger, then its status until COMPLETED.
  auto trigger = patch(url, "/jobs/" + id + "/rescaling?parallelism=1");
  REQUIRE(trigger.status == 200);
  auto status_path = "/jobs/" + id + "/rescaling/"
                     + trigger.body["request-id"].get<std::string>();
  json status;
  REQUIRE(eventually([&] {
    status = get(url, status_path).body;
    return status["status"]["id"] == "COMPLETED";
  }));
  CHECK(status["operation"] == json::object());
  CHECK(parallelisms(url, id) == std::vector<int>{1, 1, 1});
  settled(1);
  auto to4 = c.client({"rescale", id, "-p", "4"});
  REQUIRE(to4.exit_code == 0);
  CHECK(parallelisms(url, id) == std::vector<int>{4, 4, 4});
  // The job ends by itself: every key counted exactly once across the
  // three rescales.
  expect_exact_counts(c, id, out);
  for (auto* step : {"from parallelism 2 to 3", "from parallelism 3 to 1",
                     "from parallelism 1 to 4"})
    CHECK(jm.wait_for_stderr(std::string{"(counts) rescales "} + step, 1s));
  // No restart was charged: the job never failed.
  CHECK(get(url, "/jobs/" + id + "/exceptions").body["exceptionHistory"]["entries"]
          .empty());
}

} // namespace

TEST_CASE("a running keyed job rescales 2 -> 3 -> 1 -> 4 in place, exactly "
          "once (hashmap state)") {
  rescale_in_place(R"("state.backend.type": "hashmap")");
}

TEST_CASE("a running keyed job rescales 2 -> 3 -> 1 -> 4 in place, exactly "
          "once (RocksDB state, incremental checkpoints)") {
  rescale_in_place(R"("state.backend.type": "rocksdb", )"
                   R"("execution.checkpointing.incremental": true)");
}

TEST_CASE("a rescale the job or the cluster cannot take is refused, and the "
          "job runs on") {
  session_cluster c;
  c.add_worker("tm-1", 3);
  auto url = rest_url(*c.jobmanager);
  auto endless = counts_spec(c.dir, "endless", -1, c.dir.file("out"),
                             R"("state.backend.type": "hashmap")");
  auto run = c.client({"run", "-d", endless});
  REQUIRE(run.exit_code == 0);
  auto id = lines_of(run.out).back();
  REQUIRE(c.jobmanager->wait_for_stderr("(endless) completed checkpoint 1 ",
                                        30s));
  auto refused = [&](const std::string& p) {
    return c.client({"rescale", id, "-p", p});
  };
  auto slots = refused("4");
  CHECK(slots.exit_code == 3);
  CHECK(slots.err == fmt::format("weir rescale: cannot rescale job {}: it "
                                 "needs 4 slots at parallelism 4; it holds 2 "
                                 "and the cluster has 1 free\n",
                                 id));
  auto groups = refused("129");
  CHECK(groups.exit_code == 3);
  CHECK(groups.err == fmt::format("weir rescale: cannot rescale job {}: "
                                  "parallelism 129 is above the max "
                                  "parallelism of 'events' (128: its key "
                                  "groups, pipeline.max-parallelism)\n",
                                  id));
  auto zero = refused("0");
  CHECK(zero.exit_code == 2);
  CHECK(zero.err == "weir rescale: -p 0: expected 1 to 32768\n");
  auto missing = c.client({"rescale", id});
  CHECK(missing.exit_code == 2);
  CHECK(missing.err == "weir rescale: -p N is missing: the new parallelism\n");
  CHECK(c.client({"rescale", "00112233445566778899aabbccddeeff", "-p", "2"})
          .exit_code
        == 2);
  // Flink's route refuses a bad parameter and an unknown job at once.
  CHECK(patch(url, "/jobs/" + id + "/rescaling").body
        == errors("query parameter 'parallelism' is missing"));
  CHECK(patch(url, "/jobs/" + id + "/rescaling?parallelism=x").status == 400);
  CHECK(patch(url, "/jobs/00112233445566778899aabbccddeeff/rescaling?"
                   "parallelism=2")
          .status
        == 404);
  CHECK(get(url, "/jobs/" + id + "/rescaling/nope").status == 404);
  // Through all of that the job ran on at parallelism 2.
  CHECK(parallelisms(url, id) == std::vector<int>{2, 2, 2});
  CHECK(get(url, "/jobs/" + id).body["state"] == "RUNNING");
  CHECK(c.client({"rescale", id, "-p", "2"}).exit_code == 0); // it is at 2

  // An at-least-once sink would start over from the sources.
  auto loose = counts_spec(c.dir, "loose", -1, c.dir.file("loose"),
                           R"("state.backend.type": "hashmap")",
                           "at-least-once");
  REQUIRE(c.client({"cancel", id}).exit_code == 0);
  auto second = c.client({"run", "-d", loose});
  REQUIRE(second.exit_code == 0);
  auto loose_id = lines_of(second.out).back();
  REQUIRE(c.jobmanager->wait_for_stderr("(loose) switched from CREATED to "
                                        "RUNNING",
                                        30s));
  auto at_least_once = c.client({"rescale", loose_id, "-p", "3"});
  CHECK(at_least_once.exit_code == 3);
  CHECK(at_least_once.err
        == fmt::format("weir rescale: cannot rescale job {}: a sink of it is "
                       "at-least-once, so a restart starts over from its "
                       "sources\n",
                       loose_id));
}

namespace {

/// How often `text` occurs in what `p` wrote to stderr so far.
size_t occurrences(running_process& p, const std::string& text) {
  p.wait_for_stderr("\x01", 10ms); // reads what is there
  auto& log = p.stderr_so_far();
  size_t n = 0;
  for (auto at = log.find(text); at != std::string::npos;
       at = log.find(text, at + 1))
    ++n;
  return n;
}

} // namespace

TEST_CASE("the adaptive scheduler follows TaskManagers: 2 -> 4 -> 2 slots, "
          "exactly once") {
  session_cluster c{{"-Djobmanager.scheduler=adaptive",
                     "-Djobmanager.adaptive-scheduler.resource-stabilization-"
                     "timeout=1 s"}};
  c.add_worker("tm-1", 2);
  auto url = rest_url(*c.jobmanager);
  auto& jm = *c.jobmanager;
  auto out = c.dir.file("out");
  // Parallelism 4 on 2 slots: it runs at 2 instead of waiting. 40,000
  // records, 8,000 per key.
  auto run = c.client({"run", "-d", "-p", "4",
                       counts_spec(c.dir, "counts", 40000, out,
                                   R"("state.backend.type": "hashmap")")});
  REQUIRE(run.exit_code == 0);
  auto id = lines_of(run.out).back();
  REQUIRE(jm.wait_for_stderr("(counts) runs at parallelism 2 (2 slots "
                             "available, up to 4 wanted)",
                             30s));
  REQUIRE(jm.wait_for_stderr("(counts) completed checkpoint 2 ", 30s));
  CHECK(parallelisms(url, id) == std::vector<int>{2, 2, 2});
  // A second TaskManager: once its slots stayed free for 1 s, the job
  // rescales in place to 4.
  c.add_worker("tm-2", 2);
  REQUIRE(jm.wait_for_stderr("(counts) scales up: 4 slots available, it "
                             "runs at 2",
                             30s));
  REQUIRE(jm.wait_for_stderr("(counts) is rescaled to parallelism 4: every "
                             "subtask runs",
                             30s));
  CHECK(parallelisms(url, id) == std::vector<int>{4, 4, 4});
  auto taken = rescale_checkpoint(jm, "counts", 1);
  REQUIRE(taken > 0);
  REQUIRE(jm.wait_for_stderr(
    fmt::format("(counts) completed checkpoint {} ", taken + 1), 30s));
  // The second TaskManager dies: the job restarts at 2 on the first's
  // slots instead of waiting for 4.
  c.workers[1]->signal(SIGKILL);
  REQUIRE(eventually([&] {
    return occurrences(jm, "(counts) runs at parallelism 2 (2 slots "
                           "available, up to 4 wanted)")
           == 2;
  }));
  REQUIRE(eventually([&] {
    return parallelisms(url, id) == std::vector<int>{2, 2, 2};
  }));
  // Every key counted exactly once across both changes.
  expect_exact_counts(c, id, out);
}

TEST_CASE("reactive mode runs a job on every slot; weir rescale is refused "
          "under the adaptive scheduler") {
  session_cluster c{{"-Djobmanager.scheduler=adaptive",
                     "-Dscheduler-mode=reactive"}};
  c.add_worker("tm-1", 2);
  c.add_worker("tm-2", 1);
  auto url = rest_url(*c.jobmanager);
  auto run = c.client({"run", "-d", "-p", "1",
                       counts_spec(c.dir, "reactive", -1, c.dir.file("out"),
                                   R"("state.backend.type": "hashmap")")});
  REQUIRE(run.exit_code == 0);
  auto id = lines_of(run.out).back();
  REQUIRE(c.jobmanager->wait_for_stderr("(reactive) runs at parallelism 3 (3 "
                                        "slots available, up to 128 wanted)",
                                        30s));
  REQUIRE(eventually([&] {
    return parallelisms(url, id) == std::vector<int>{3, 3, 3};
  }));
  auto refused = c.client({"rescale", id, "-p", "2"});
  CHECK(refused.exit_code == 3);
  CHECK(refused.err == fmt::format("weir rescale: cannot rescale job {}: the "
                                   "adaptive scheduler sets its parallelism "
                                   "from the slots it can get "
                                   "(jobmanager.scheduler: adaptive)\n",
                                   id));
}

namespace {

/// Each subtask of job `id` as "vertex/index" → its attempt number, or
/// nothing unless every one of them runs.
std::optional<std::map<std::string, int>> running_attempts(
  const std::string& url, const std::string& id) {
  auto job = get(url, "/jobs/" + id);
  if (job.status != 200)
    return std::nullopt;
  auto body = job.body;
  std::map<std::string, int> out;
  for (auto& v : body["vertices"]) {
    auto name = v["name"].get<std::string>();
    auto vertex = get(url, "/jobs/" + id + "/vertices/"
                             + v["id"].get<std::string>())
                    .body;
    for (auto& t : vertex["subtasks"]) {
      if (t["status"] != "RUNNING")
        return std::nullopt;
      out[fmt::format("{}/{}", name, t["subtask"].get<int>())]
        = t["attempt"].get<int>();
    }
  }
  return out;
}

} // namespace

TEST_CASE("a killed jobmanager's successor adopts the running subtasks: "
          "same attempts, exact output") {
  temp_dir dir;
  std::string weir = std::getenv("WEIR_BIN");
  restartable_jobmanager master{dir.file("state")};
  running_process tm1{{weir, "taskmanager", "-m", master.address, "--slots",
                       "2", "--id", "tm-1"}};
  running_process tm2{{weir, "taskmanager", "-m", master.address, "--slots",
                       "2", "--id", "tm-2"}};
  REQUIRE(master->wait_for_stderr("TaskExecutor tm-1 registered", 30s));
  REQUIRE(master->wait_for_stderr("TaskExecutor tm-2 registered", 30s));
  auto out = dir.file("out");
  // A subtask fails once (after 1500 records) so that the attempts run are
  // number 1: a JobMaster that redeployed them would start over at 0.
  // 30,000 records, 6,000 per key, about 8 s.
  auto spec = dir.write("adopt.json", fmt::format(R"({{
    "name": "adopt", "parallelism": 2,
    "config": {{"execution.checkpointing.interval": "200 ms",
               "restart-strategy.type": "fixed-delay",
               "restart-strategy.fixed-delay.delay": "50 ms"}},
    "vertices": [
      {{"id": "events", "operator": "generator", "params": {{"count": 30000, "rate": 2000, "keys": 5}}}},
      {{"id": "flaky", "operator": "map", "params": {{"function": "fail_once", "marker": "{}", "after": 1500}}}},
      {{"id": "counts", "operator": "count"}},
      {{"id": "out", "operator": "text_file", "params": {{"path": "{}", "delivery": "exactly-once"}}}}],
    "edges": [{{"from": "events", "to": "flaky", "partitioning": "forward"}},
              {{"from": "flaky", "to": "counts", "partitioning": "hash"}},
              {{"from": "counts", "to": "out", "partitioning": "forward"}}]}})",
                                                    dir.file("marker"), out));
  auto run = run_weir({"run", "-m", master.rest, "-d", spec});
  REQUIRE(run.exit_code == 0);
  auto id = lines_of(run.out).back();
  auto url = rest_url(*master);
  std::map<std::string, int> before;
  REQUIRE(eventually([&] {
    auto now = running_attempts(url, id);
    if (!now || now->empty() || now->begin()->second != 1)
      return false;
    before = *now;
    return true;
  }));
  REQUIRE(master->wait_for_stderr("(adopt) completed checkpoint", 30s));
  master.kill();
  // Packed slots: the job runs on one of the workers, which keeps it.
  auto keeping = [&](running_process& tm) {
    tm.drain();
    return tm.stderr_so_far().find("keeping 4 subtasks running")
           != std::string::npos;
  };
  REQUIRE(eventually([&] { return keeping(tm1) || keeping(tm2); }));
  master.restart();
  REQUIRE(master->wait_for_stderr("(adopt) adopted its 4 running subtasks on ",
                                  30s));
  // The same attempts run on, under the new JobMaster.
  auto after = running_attempts(rest_url(*master), id);
  REQUIRE(after);
  CHECK(*after == before);
  auto waited = run_weir({"wait", "-m", master.rest, id}, 60s);
  INFO(waited.err);
  REQUIRE(waited.exit_code == 0);
  std::map<std::string, int64_t> expected;
  for (int k = 0; k < 5; ++k)
    expected[fmt::format("key-{}", k)] = 6000;
  CHECK(last_counts(committed_lines(out)) == expected);
  REQUIRE(master->wait_for_stderr("(adopt) FINISHED", 30s));
  auto log = master->stderr_so_far();
  CHECK(log.find("starts its subtasks afresh") == std::string::npos);
  CHECK(log.find("(adopt) restarts in") == std::string::npos);
  // Checkpoints went on under the new JobMaster.
  CHECK(log.find("(adopt) completed checkpoint") != std::string::npos);
}
