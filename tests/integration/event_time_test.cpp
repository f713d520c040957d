// Event time through the real binary: watermarks from a field, tumbling
// windows that fire as the watermark passes them, late rows dropped and
// counted, embedded and across two taskmanager processes, and the
// one-line refusals of settings that cannot apply (docs/event-time.md).
#include <doctest/doctest.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <ctime>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cluster_fixture.hpp"
#include "process.hpp"
#include "refusal.hpp"
#include "rest_client.hpp"
#include "user_code_paths.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

/// A text_file source reads this many lines per batch (exchange_options),
/// and with pipeline.auto-watermark-interval 0 a watermark follows each.
constexpr int64_t batch = 2048;
constexpr int64_t delay_ms = 2000;
constexpr int64_t size_ms = 10000;

struct event {
  int64_t t;
  std::string key;
};

/// Three batches of events: the first spans [0 s, 20 s), the second
/// [20 s, 40 s) and ends with 24 rows at 5 s (late: the watermark after
/// the first batch passed [0 s, 10 s)) and 24 at 15 s (not late), the
/// third [40 s, 60 s).
std::vector<std::vector<event>> batches() {
  std::vector<std::vector<event>> out(3);
  for (int64_t i = 0; i < batch; ++i)
    out[0].push_back({i * 20000 / batch, fmt::format("k{}", i % 4)});
  for (int64_t i = 0; i < batch - 48; ++i)
    out[1].push_back({20000 + i * 20000 / (batch - 48),
                      fmt::format("k{}", i % 4)});
  for (int64_t i = 0; i < 24; ++i)
    out[1].push_back({5000, fmt::format("k{}", i % 3)});
  for (int64_t i = 0; i < 24; ++i)
    out[1].push_back({15000, fmt::format("k{}", i % 3)});
  for (int64_t i = 0; i < batch; ++i)
    out[2].push_back({40000 + i * 20000 / batch, fmt::format("k{}", i % 4)});
  return out;
}

std::string iso(int64_t ms) {
  // Event times here are under an hour past 1970; a timestamp's text
  // shows its milliseconds when they are not zero.
  auto text = fmt::format("1970-01-01T00:{:02}:{:02}", ms / 60000,
                          ms / 1000 % 60);
  if (ms % 1000 != 0)
    text += fmt::format(".{:03}", ms % 1000);
  return text + "Z";
}

/// The windows' counts by Flink's rule, computed here: a watermark of the
/// largest event time less the delay less 1 ms follows each batch, and a
/// row whose window's end - 1 is at or below the watermark before it is
/// late. Also the late rows.
std::pair<std::vector<std::string>, int64_t>
expected(const std::vector<std::vector<event>>& in) {
  std::map<std::tuple<std::string, int64_t>, int64_t> counts;
  int64_t watermark = INT64_MIN;
  int64_t largest = INT64_MIN;
  int64_t late = 0;
  for (auto& b : in) {
    for (auto& e : b) {
      auto start = e.t - e.t % size_ms;
      if (start + size_ms - 1 <= watermark) {
        ++late;
        continue;
      }
      ++counts[{e.key, start}];
      largest = std::max(largest, e.t);
    }
    watermark = largest - delay_ms - 1;
  }
  std::vector<std::string> lines;
  for (auto& [k, n] : counts)
    lines.push_back(fmt::format("{}\t{}\t{}\t{}", std::get<0>(k),
                                iso(std::get<1>(k)),
                                iso(std::get<1>(k) + size_ms), n));
  std::sort(lines.begin(), lines.end());
  return {lines, late};
}

/// The events as lines "t key" in a file of `dir`; its path.
std::string events_file(temp_dir& dir,
                        const std::vector<std::vector<event>>& in) {
  std::string text;
  for (auto& b : in)
    for (auto& e : b)
      text += fmt::format("{} {}\n", e.t, e.key);
  return dir.write("events.txt", text);
}

/// Runs `weir run ARGS` on each state backend: its output, sorted, is
/// `expected`.
void check_both_backends(const std::vector<std::string>& args,
                         const std::vector<std::string>& expected) {
  for (std::string backend : {"hashmap", "rocksdb"}) {
    std::vector<std::string> with{"run"};
    with.insert(with.end(), args.begin(), args.end());
    with.push_back("-Dstate.backend.type=" + backend);
    auto r = run_weir(with, 60s);
    INFO(backend << ": weir run said: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(sorted_lines(r.out) == expected);
  }
}

/// `text` with its first `from` replaced by `to` (which must be there).
std::string replaced(std::string text, const std::string& from,
                     const std::string& to) {
  auto i = text.find(from);
  REQUIRE(i != std::string::npos);
  return text.replace(i, from.size(), to);
}

std::string spec_text(const std::string& input, const std::string& sink) {
  return R"({"name": "windows", "parallelism": 2,
    "vertices": [
      {"id": "lines", "operator": "text_file", "parallelism": 1,
       "params": {"path": ")" + input + R"("}},
      {"id": "parsed", "operator": "parse", "parallelism": 1,
       "params": {"format": "whitespace", "schema": "t: int64, k: string"},
       "watermarks": {"field": "t", "max-out-of-orderness": "2 s"}},
      {"id": "counts", "operator": "window",
       "params": {"type": "tumbling", "size": "10 s"}},
      {"id": "out", "operator": ")" + sink + R"(", "parallelism": 1}],
    "edges": [
      {"from": "lines", "to": "parsed"},
      {"from": "parsed", "to": "counts", "partitioning": "hash", "key": "k"},
      {"from": "counts", "to": "out", "partitioning": "rebalance"}]})";
}

} // namespace

TEST_CASE("tumbling event-time windows are exact and drop late rows, "
          "embedded and across two taskmanagers") {
  temp_dir dir;
  auto in = batches();
  auto input = events_file(dir, in);
  auto [lines, late] = expected(in);
  REQUIRE(late == 24);
  auto counter = fmt::format("Counter counts.numLateRecordsDropped: {}", late);

  auto spec = dir.write("windows.json", spec_text(input, "stdout"));
  auto local = run_weir({"run", spec, "-Dpipeline.auto-watermark-interval=0"},
                        60s);
  INFO("weir run said: " << local.err);
  REQUIRE(local.exit_code == 0);
  CHECK(sorted_lines(local.out) == lines);
  CHECK(local.err.find(counter) != std::string::npos);
  // The same windows in RocksDB.
  auto rocks = run_weir({"run", spec, "-Dpipeline.auto-watermark-interval=0",
                         "-Dstate.backend.type=rocksdb"},
                        60s);
  INFO("weir run (rocksdb) said: " << rocks.err);
  REQUIRE(rocks.exit_code == 0);
  CHECK(sorted_lines(rocks.out) == lines);
  CHECK(rocks.err.find(counter) != std::string::npos);
  // Session windows with a gap longer than any pause between a key's rows
  // make one session per key: every row but the late ones counts.
  auto sessions_spec = dir.write(
    "sessions.json", replaced(spec_text(input, "stdout"),
                              R"("type": "tumbling", "size": "10 s")",
                              R"("type": "session", "gap": "10 s")"));
  for (auto backend : {"hashmap", "rocksdb"}) {
    auto s = run_weir({"run", sessions_spec,
                       "-Dpipeline.auto-watermark-interval=0",
                       std::string{"-Dstate.backend.type="} + backend},
                      60s);
    INFO("sessions (" << backend << ") said: " << s.err);
    REQUIRE(s.exit_code == 0);
    std::map<std::string, int64_t> per_key;
    for (auto& line : sorted_lines(s.out)) {
      auto key = line.substr(0, line.find('\t'));
      per_key[key] += std::stoll(line.substr(line.rfind('\t') + 1));
    }
    CHECK(per_key.size() == 4);
    int64_t total = 0;
    for (auto& [k, n] : per_key)
      total += n;
    CHECK(total == 3 * batch); // the 24 rows at 5 s join k's open session
  }

  // One slot per worker: window subtask 2/2 runs in the other process, so
  // its rows and watermarks cross a data connection, and its results
  // cross back to the collecting sink.
  auto collected = dir.write("collected.json", spec_text(input, "collect"));
  session_cluster cluster;
  cluster.add_worker("a", 1);
  cluster.add_worker("b", 1);
  auto remote = cluster.client(
    {"run", collected, "-Dpipeline.auto-watermark-interval=0"});
  INFO("weir run -m said: " << remote.err);
  REQUIRE(remote.exit_code == 0);
  CHECK(sorted_lines(remote.out) == lines);
  CHECK(remote.err.find(counter) != std::string::npos);
}

TEST_CASE("examples/clicks_per_minute.json counts each user's clicks per "
          "minute exactly, every window firing at the end of the input") {
  temp_dir dir;
  // 20,000 clicks of 13 users over 30 minutes, each arriving up to 4.9 s
  // after it happened (the example allows 5 s), some on a minute's edge.
  constexpr int64_t start = 1764496800000;
  std::vector<std::pair<int64_t, std::pair<int64_t, std::string>>> arrivals;
  uint64_t seed = 31;
  auto next = [&seed](uint64_t bound) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((seed >> 33) % bound);
  };
  for (int64_t i = 0; i < 20000; ++i) {
    int64_t t = start + i * 90 + (i % 97 == 0 ? 0 : next(90));
    if (i % 500 == 0)
      t = start + (i / 500) * 60000 % (30 * 60000); // on an edge
    arrivals.push_back({t + next(4900), {t, fmt::format("u{}", next(13))}});
  }
  std::sort(arrivals.begin(), arrivals.end());
  std::string text;
  std::map<std::pair<std::string, int64_t>, int64_t> counts;
  for (auto& [arrival, click] : arrivals) {
    text += fmt::format("{}\t{}\n", click.second, click.first);
    ++counts[{click.second, click.first - click.first % 60000}];
  }
  std::vector<std::string> expected;
  for (auto& [k, n] : counts)
    expected.push_back(fmt::format("{}\t{}\t{}", k.first, k.second, n));
  std::sort(expected.begin(), expected.end());
  auto input = dir.write("clicks.tsv", text);
  auto output = dir.file("per_minute.tsv");
  auto r = run_weir({"run", "examples/clicks_per_minute.json", "--input",
                     input, "--output", output},
                    60s);
  INFO("weir run said: " << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(sorted_lines(read_file(output)) == expected);
  CHECK(r.err.find("Counter per_minute.numLateRecordsDropped: 0")
        != std::string::npos);
}

TEST_CASE("late rows go to the window's side output when an edge takes it, "
          "exact and not counted as dropped") {
  temp_dir dir;
  auto in = batches();
  auto input = events_file(dir, in);
  auto [lines, late] = expected(in);
  REQUIRE(late == 24);
  // The late rows as they came: (t: int64, k: string) at 5 s.
  std::vector<std::string> late_rows;
  for (int64_t i = 0; i < 24; ++i)
    late_rows.push_back(fmt::format("5000\tk{}", i % 3));
  std::sort(late_rows.begin(), late_rows.end());
  auto late_file = dir.file("late.tsv");
  // A second sink takes the window's "late" output.
  auto with_sink = replaced(
    replaced(spec_text(input, "stdout"),
             R"({"from": "counts", "to": "out", "partitioning": "rebalance"})",
             R"({"from": "counts", "to": "out", "partitioning": "rebalance"},
      {"from": "counts", "to": "late", "output": "late",
       "partitioning": "rebalance"})"),
    R"({"id": "out", "operator": "stdout", "parallelism": 1})",
    R"({"id": "out", "operator": "stdout", "parallelism": 1},
      {"id": "late", "operator": "text_file", "parallelism": 1,
       "params": {"path": ")" + late_file + R"("}})");
  auto spec = dir.write("side.json", with_sink);
  for (auto backend : {"hashmap", "rocksdb"}) {
    auto r = run_weir({"run", spec, "-Dpipeline.auto-watermark-interval=0",
                       std::string{"-Dstate.backend.type="} + backend},
                      60s);
    INFO(backend << ": weir run said: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(sorted_lines(r.out) == lines);
    CHECK(sorted_lines(read_file(late_file)) == late_rows);
    CHECK(r.err.find("Counter counts.numLateRecordsDropped: 0")
          != std::string::npos);
  }
  // Window subtask 2/2 in another process: its late rows cross a data
  // connection of their own.
  session_cluster cluster;
  cluster.add_worker("a", 1);
  cluster.add_worker("b", 1);
  auto remote = cluster.client({"run", spec, "-Dpipeline.auto-watermark-interval=0"});
  INFO("weir run -m said: " << remote.err);
  REQUIRE(remote.exit_code == 0);
  CHECK(sorted_lines(read_file(late_file)) == late_rows);
  // An output the operator does not have is refused before anything runs.
  auto bad = dir.write("bad.json", replaced(with_sink, R"("output": "late")",
                                            R"("output": "early")"));
  expect_refused({"run", bad},
                 bad + ": edge 'counts' -> 'late': operator 'window' of "
                       "'counts' has no side output 'early' (its side "
                       "outputs: late)");
}

TEST_CASE("watermarks and windows that cannot apply are refused in one "
          "line, exit 2") {
  temp_dir dir;
  auto input = dir.write("events.txt", "1 a\n");
  auto with = [&](const std::string& from, const std::string& to) {
    return dir.write("bad.json", replaced(spec_text(input, "discard"), from, to));
  };
  auto spec = with(R"("field": "t")", R"("field": "k")");
  expect_refused({"run", spec},
                 spec + ": vertex 'parsed': watermarks.field: 'k' is string; "
                        "an event time is int64 milliseconds or a timestamp");
  spec = with(R"("field": "t")", R"("field": "time")");
  expect_refused({"run", spec},
                 spec + ": vertex 'parsed': watermarks.field: 'time' is not in "
                        "(t: int64, k: string)");
  spec = with(R"("max-out-of-orderness": "2 s")",
              R"("max-out-of-orderness": "soon")");
  expect_refused({"run", spec},
                 spec + ": vertices[1].watermarks.max-out-of-orderness: "
                        "'soon' is not a duration (e.g. \"5 s\", \"200 ms\")");
  spec = with(R"("size": "10 s")", R"("size": "10 s", "time": "processing",
              "allowed-lateness": "1 s")");
  expect_refused({"run", spec},
                 spec + ": vertices[2] ('counts'): parameter 'allowed-lateness': "
                        "processing-time windows have no late rows (the clock "
                        "puts each row in an open window)");
  spec = with(R"("type": "tumbling")", R"("type": "hopping")");
  expect_refused({"run", spec},
                 spec + ": vertices[2] ('counts'): parameter 'type': unknown window "
                        "type 'hopping' (known: session, sliding, tumbling)");
}

TEST_CASE("a running job's watermarks in the REST API: each window "
          "subtask's input watermark follows the generator's event time") {
  temp_dir dir;
  // Event time = the generator's value (ms): 2000 rows a second move it 2 s
  // a second; monotonous, so the watermark is the largest value less 1 ms.
  auto spec = dir.write("live.json", R"({"name": "live", "parallelism": 2,
    "vertices": [
      {"id": "numbers", "operator": "generator", "parallelism": 1,
       "params": {"rate": 2000, "keys": 4},
       "watermarks": {"field": "value", "strategy": "monotonous"}},
      {"id": "counts", "operator": "window",
       "params": {"type": "tumbling", "size": "1 s"}},
      {"id": "out", "operator": "discard"}],
    "edges": [
      {"from": "numbers", "to": "counts", "partitioning": "hash"},
      {"from": "counts", "to": "out"}]})");
  session_cluster cluster;
  cluster.add_worker("a", 2);
  auto submitted = cluster.client({"run", "-d", spec});
  REQUIRE(submitted.exit_code == 0);
  std::smatch m;
  auto said = submitted.out + submitted.err;
  REQUIRE(std::regex_search(said, m, std::regex{"JobID ([0-9a-f]{32})"}));
  std::string id = m[1];
  auto path = "/jobs/" + id + "/vertices/counts/watermarks";
  nlohmann::json last;
  CHECK(eventually([&] {
    auto r = rest_get(cluster.rest, path);
    if (!r || r->status != 200)
      return false;
    last = nlohmann::json::parse(r->body);
    if (!last.is_array() || last.size() != 2)
      return false;
    for (auto& w : last)
      if (std::stoll(w["value"].get<std::string>()) < 2000)
        return false; // not yet two seconds of event time
    return true;
  }));
  INFO("watermarks: " << last.dump());
  REQUIRE(last.size() == 2);
  CHECK(last[0]["id"] == "0.currentInputWatermark");
  CHECK(last[1]["id"] == "1.currentInputWatermark");
  // weir status shows them per task, in UTC.
  auto status = cluster.client({"status", id});
  REQUIRE(status.exit_code == 0);
  CHECK(std::regex_search(status.out,
                          std::regex{"Watermarks \\(event time, UTC; the least "
                                     "of a task's subtasks\\):\n  numbers +"
                                     "input none  output 1970-01-01T"}));
  CHECK(std::regex_search(status.out,
                          std::regex{"\n  counts -> out  input 1970-01-01T"
                                     "00:00:[0-9]{2}\\.[0-9]{3}Z  output "}));
  auto unknown = rest_get(cluster.rest, "/jobs/" + id + "/vertices/nope/watermarks");
  REQUIRE(unknown);
  CHECK(unknown->status == 404);
  CHECK(cluster.client({"cancel", id}).exit_code == 0);
}

namespace {

/// Generator rows (key-<i % 7>, i) with event time i ms, paced (2000 a
/// second over two subtasks), through `middle` (extra vertices after
/// "events", each forward), into 100 ms tumbling counts, committed by an
/// exactly-once file sink on checkpoints every 100 ms.
std::string exactly_once_spec(const std::string& out,
                              const std::string& middle_vertex = {},
                              bool bounded = true) {
  auto from = middle_vertex.empty() ? "events" : "flaky";
  return fmt::format(R"({{"name": "windows-eo", "parallelism": 2,
    "config": {{"execution.checkpointing.interval": "100 ms",
               "pipeline.auto-watermark-interval": "0",
               "restart-strategy.type": "fixed-delay",
               "restart-strategy.fixed-delay.attempts": 3,
               "restart-strategy.fixed-delay.delay": "50 ms"}},
    "vertices": [
      {{"id": "events", "operator": "generator",
        "params": {{{}"rate": 1000, "keys": 7}},
        "watermarks": {{"field": "value", "strategy": "monotonous"}}}},
      {}
      {{"id": "counts", "operator": "window",
        "params": {{"type": "tumbling", "size": "100 ms"}}}},
      {{"id": "out", "operator": "text_file",
        "params": {{"path": "{}", "delivery": "exactly-once"}}}}],
    "edges": [
      {}
      {{"from": "{}", "to": "counts", "partitioning": "hash"}},
      {{"from": "counts", "to": "out", "partitioning": "rebalance"}}]}})",
                     bounded ? R"("count": 6000, )" : "",
                     middle_vertex.empty() ? "" : middle_vertex + ",", out,
                     middle_vertex.empty()
                       ? ""
                       : R"({"from": "events", "to": "flaky", "partitioning": "forward"},)",
                     from);
}

/// Each 100 ms window's count per key of the generator's 6000 rows.
std::vector<std::string> expected_counts() {
  std::map<std::pair<int, int64_t>, int64_t> n;
  for (int64_t i = 0; i < 6000; ++i)
    ++n[{static_cast<int>(i % 7), i - i % 100}];
  std::vector<std::string> lines;
  for (auto& [k, c] : n)
    lines.push_back(fmt::format("key-{}\t{}\t{}\t{}", k.first, iso(k.second),
                                iso(k.second + 100), c));
  std::sort(lines.begin(), lines.end());
  return lines;
}

} // namespace

TEST_CASE("windows into an exactly-once sink: each window once, exact, "
          "across a failure and a killed taskmanager") {
  SUBCASE("a subtask fails once mid-stream") {
    one_worker_cluster c;
    auto out = c.dir.file("out");
    auto spec = c.dir.write("eo.json", exactly_once_spec(out, fmt::format(
      R"({{"id": "flaky", "operator": "map",
          "params": {{"function": "fail_once", "marker": "{}",
                      "after": 1500}}}})",
      c.dir.file("marker"))));
    auto r = run_weir({"run", "-m", c.rest, spec}, 60s);
    INFO("weir run said: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(std::filesystem::exists(c.dir.file("marker")));
    CHECK(committed_lines(out) == expected_counts());
    REQUIRE(c.master->wait_for_stderr("(windows-eo) FINISHED", 30s));
    CHECK(c.master->stderr_so_far().find("(windows-eo) resumes from checkpoint ")
          != std::string::npos);
  }
  SUBCASE("the taskmanager running it is killed") {
    temp_dir dir;
    session_cluster cluster{{"-Drestart-strategy.type=fixed-delay",
                             "-Drestart-strategy.fixed-delay.delay=50 ms"}};
    cluster.add_worker("victim", 2);
    auto out = dir.file("out");
    auto spec = dir.write("eo.json", exactly_once_spec(out));
    running_process run{{std::getenv("WEIR_BIN"), "run", "-m", cluster.rest,
                         spec}};
    // Killed once a checkpoint completed, so the job resumes from it.
    REQUIRE(cluster.jobmanager->wait_for_stderr("completed checkpoint 2", 30s));
    cluster.add_worker("survivor", 2);
    cluster.workers.front()->signal(SIGKILL);
    REQUIRE(cluster.jobmanager->wait_for_stderr("TaskExecutor victim lost", 30s));
    auto r = run.finish(60s);
    INFO("weir run said: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(committed_lines(out) == expected_counts());
    REQUIRE(cluster.jobmanager->wait_for_stderr("(windows-eo) FINISHED", 30s));
    CHECK(cluster.jobmanager->stderr_so_far().find(
            "(windows-eo) resumes from checkpoint ")
          != std::string::npos);
  }
}

namespace {

/// The windowed job stopped with a savepoint and resumed from it with
/// `resume_flags` (such as another parallelism). The generator runs until
/// stopped; the job resumed from the savepoint ends at 6,000 rows in all.
/// Windows open at the stop are in the savepoint, not fired: the union of
/// both runs' committed windows is the bounded job's exact output.
void stop_and_resume_windows(const std::vector<std::string>& resume_flags) {
  one_worker_cluster c;
  running_process second_worker{{c.weir, "taskmanager", "-m", c.address,
                                 "--slots", "2", "--id", "second"}};
  REQUIRE(c.master->wait_for_stderr("TaskExecutor second registered", 30s));
  auto first = c.dir.file("first");
  auto submitted = run_weir({"run", "-m", c.rest, "-d",
                             c.dir.write("endless.json",
                                         exactly_once_spec(first, {}, false))});
  REQUIRE(submitted.exit_code == 0);
  std::smatch m;
  auto said = submitted.out + submitted.err;
  REQUIRE(std::regex_search(said, m, std::regex{"JobID ([0-9a-f]{32})"}));
  std::string id = m[1];
  REQUIRE(c.master->wait_for_stderr("(windows-eo) completed checkpoint 3 ", 30s));
  auto savepoint = stop_with_savepoint(c.rest, id, c.dir.file("savepoints"));
  auto before = committed_lines(first);
  auto second = c.dir.file("second");
  std::vector<std::string> args{"run", "-m", c.rest, "-s", savepoint};
  args.insert(args.end(), resume_flags.begin(), resume_flags.end());
  args.push_back(c.dir.write("bounded.json", exactly_once_spec(second)));
  auto r = run_weir(args, 60s);
  INFO("weir run -s said: " << r.err);
  REQUIRE(r.exit_code == 0);
  auto all = before;
  for (auto& line : committed_lines(second))
    all.push_back(line);
  std::sort(all.begin(), all.end());
  CHECK_FALSE(before.empty());
  CHECK(all == expected_counts());
}

} // namespace

TEST_CASE("a windowed job stopped with a savepoint and resumed from it "
          "commits each window once, exact") {
  stop_and_resume_windows({});
}

TEST_CASE("a windowed job resumed from a savepoint at another parallelism "
          "commits each window once, exact") {
  stop_and_resume_windows({"-p", "3"});
}

TEST_CASE("a user operator's event-time timers fire as the watermark passes "
          "them and at the end, on both backends and across processes") {
  // examples/user_code's count_with_timeout (Flink's KeyedProcessFunction
  // example, timeout 10 s) over rows in event-time order: key a at 0-999
  // ms, key b every 20 ms from 1 s to 201 s, key a again at 300 s. The
  // watermark passes a's first timer (10.999 s) during b's rows, and b's
  // (210.98 s) once a's second burst came; a's second fires at the end.
  temp_dir dir;
  std::string text;
  for (int64_t t = 0; t < 1000; ++t)
    text += fmt::format("a {}\n", t);
  for (int64_t i = 0; i < 10000; ++i)
    text += fmt::format("b {}\n", 1000 + 20 * i);
  for (int64_t t = 300000; t < 301000; ++t)
    text += fmt::format("a {}\n", t);
  auto input = dir.write("events.txt", text);
  auto spec = dir.write("timeouts.json", R"({"name": "timeouts",
    "parallelism": 2,
    "vertices": [
      {"id": "lines", "operator": "text_file", "parallelism": 1,
       "params": {"path": ")" + input + R"("}},
      {"id": "parsed", "operator": "parse", "parallelism": 1,
       "params": {"format": "whitespace", "schema": "key: string, value: int64"},
       "watermarks": {"field": "value", "strategy": "monotonous"}},
      {"id": "idle", "operator": "count_with_timeout",
       "params": {"timeout_ms": 10000}},
      {"id": "out", "operator": "collect", "parallelism": 1}],
    "edges": [
      {"from": "lines", "to": "parsed"},
      {"from": "parsed", "to": "idle", "partitioning": "hash"},
      {"from": "idle", "to": "out", "partitioning": "rebalance"}]})");
  std::vector<std::string> expected{"a\t1000", "a\t1000", "b\t10000"};
  check_both_backends({spec, "--libjars", example_ops(),
                       "-Dpipeline.auto-watermark-interval=0"},
                      expected);
  session_cluster cluster;
  cluster.add_worker("a", 1);
  cluster.add_worker("b", 1);
  auto remote = cluster.client({"run", spec, "--libjars", example_ops(),
                                "-Dpipeline.auto-watermark-interval=0",
                                "-Dstate.backend.type=rocksdb"});
  INFO("weir run -m said: " << remote.err);
  REQUIRE(remote.exit_code == 0);
  CHECK(sorted_lines(remote.out) == expected);
}

TEST_CASE("processing-time windows fire by the clock while the job runs, and "
          "count every row once") {
  // 6000 rows over about 3 s (1000 a second per generator subtask): 1 s
  // windows by the clock fire while rows still come, and the last ones at
  // the end of the input.
  temp_dir dir;
  auto spec = dir.write("clock.json", R"({"name": "clock", "parallelism": 2,
    "vertices": [
      {"id": "events", "operator": "generator",
       "params": {"count": 6000, "rate": 1000, "keys": 3}},
      {"id": "w", "operator": "window",
       "params": {"type": "tumbling", "size": "1 s", "time": "processing"}},
      {"id": "out", "operator": "stdout", "parallelism": 1}],
    "edges": [
      {"from": "events", "to": "w", "partitioning": "hash"},
      {"from": "w", "to": "out", "partitioning": "rebalance"}]})");
  for (auto backend : {"hashmap", "rocksdb"}) {
    auto r = run_weir({"run", spec,
                       std::string{"-Dstate.backend.type="} + backend},
                      60s);
    INFO(backend << ": weir run said: " << r.err);
    REQUIRE(r.exit_code == 0);
    std::map<std::string, int64_t> per_key;
    std::set<std::string> windows;
    for (auto& line : sorted_lines(r.out)) {
      std::vector<std::string> fields;
      std::istringstream in{line};
      for (std::string f; std::getline(in, f, '\t');)
        fields.push_back(f);
      REQUIRE(fields.size() == 4);
      per_key[fields[0]] += std::stoll(fields[3]);
      windows.insert(fields[1]);
    }
    CHECK(per_key == std::map<std::string, int64_t>{
                       {"key-0", 2000}, {"key-1", 2000}, {"key-2", 2000}});
    CHECK(windows.size() >= 3); // 3 s of rows: at least three windows
    // A row in the millisecond its window fired goes to the next one.
    CHECK(r.err.find("Counter w.numLateRecordsDropped: 0") != std::string::npos);
  }
}

namespace {

/// Clicks (user, t) joined with the orders (customer, t, amount) of the
/// same user from 5 s before to 10 s after each click, out of two files.
std::string join_spec(const std::string& clicks, const std::string& orders,
                      const std::string& sink) {
  return R"({"name": "join", "parallelism": 2,
    "vertices": [
      {"id": "c_lines", "operator": "text_file", "parallelism": 1,
       "params": {"path": ")" + clicks + R"("}},
      {"id": "clicks", "operator": "parse", "parallelism": 1,
       "params": {"format": "whitespace", "schema": "user: string, click_time: int64"},
       "watermarks": {"field": "click_time", "max-out-of-orderness": "3 s"}},
      {"id": "o_lines", "operator": "text_file", "parallelism": 1,
       "params": {"path": ")" + orders + R"("}},
      {"id": "orders", "operator": "parse", "parallelism": 1,
       "params": {"format": "whitespace",
                  "schema": "customer: string, order_time: int64, amount: int64"},
       "watermarks": {"field": "order_time", "max-out-of-orderness": "3 s"}},
      {"id": "joined", "operator": "interval_join",
       "params": {"left": "clicks", "right": "orders",
                  "lower": "-5 s", "upper": "10 s"}},
      {"id": "out", "operator": ")" + sink + R"(", "parallelism": 1}],
    "edges": [
      {"from": "c_lines", "to": "clicks"},
      {"from": "o_lines", "to": "orders"},
      {"from": "clicks", "to": "joined", "partitioning": "hash", "key": ["user"]},
      {"from": "orders", "to": "joined", "partitioning": "hash", "key": ["customer"]},
      {"from": "joined", "to": "out", "partitioning": "rebalance"}]})";
}

} // namespace

TEST_CASE("an interval join of two keyed streams is exact, on both backends "
          "and across processes") {
  // 6,000 clicks and 2,000 orders of 17 users over 20 minutes, each file
  // up to 2 s out of order (the watermarks allow 3 s: no row is late).
  temp_dir dir;
  uint64_t seed = 7;
  auto next = [&seed](uint64_t bound) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<int64_t>((seed >> 33) % bound);
  };
  struct row {
    int64_t arrival;
    int64_t t;
    std::string user;
    int64_t amount;
  };
  auto make = [&](int64_t n, bool with_amount) {
    std::vector<row> rows;
    for (int64_t i = 0; i < n; ++i) {
      auto t = next(20 * 60000);
      rows.push_back({t + next(2000), t, fmt::format("u{}", next(17)),
                      with_amount ? next(1000) : 0});
    }
    std::sort(rows.begin(), rows.end(),
              [](auto& a, auto& b) { return a.arrival < b.arrival; });
    return rows;
  };
  auto clicks = make(6000, false);
  auto orders = make(2000, true);
  std::string clicks_text;
  std::string orders_text;
  for (auto& c : clicks)
    clicks_text += fmt::format("{} {}\n", c.user, c.t);
  for (auto& o : orders)
    orders_text += fmt::format("{} {} {}\n", o.user, o.t, o.amount);
  std::vector<std::string> expected;
  for (auto& c : clicks)
    for (auto& o : orders)
      if (c.user == o.user && o.t >= c.t - 5000 && o.t <= c.t + 10000)
        expected.push_back(
          fmt::format("{}\t{}\t{}\t{}", c.user, c.t, o.t, o.amount));
  std::sort(expected.begin(), expected.end());
  REQUIRE(expected.size() > 1000);
  auto clicks_file = dir.write("clicks.txt", clicks_text);
  auto orders_file = dir.write("orders.txt", orders_text);
  auto spec = dir.write("join.json", join_spec(clicks_file, orders_file, "stdout"));
  for (auto backend : {"hashmap", "rocksdb"}) {
    auto r = run_weir({"run", spec, std::string{"-Dstate.backend.type="} + backend},
                      60s);
    INFO(backend << ": weir run said: " << r.err);
    REQUIRE(r.exit_code == 0);
    CHECK(sorted_lines(r.out) == expected);
    CHECK(r.err.find("Counter joined.numLateRecordsDropped: 0")
          != std::string::npos);
  }
  session_cluster cluster;
  cluster.add_worker("a", 1);
  cluster.add_worker("b", 1);
  auto collected = dir.write("collected.json",
                             join_spec(clicks_file, orders_file, "collect"));
  auto remote = cluster.client({"run", collected});
  INFO("weir run -m said: " << remote.err);
  REQUIRE(remote.exit_code == 0);
  CHECK(sorted_lines(remote.out) == expected);
}

TEST_CASE("interval joins that cannot apply are refused in one line, exit 2") {
  temp_dir dir;
  auto clicks = dir.write("clicks.txt", "u1 1\n");
  auto orders = dir.write("orders.txt", "u1 1 1\n");
  auto with = [&](const std::string& from, const std::string& to) {
    return dir.write("bad.json",
                     replaced(join_spec(clicks, orders, "discard"), from, to));
  };
  auto spec = with(R"("right": "orders")", R"("right": "order")");
  expect_refused({"run", spec},
                 spec + ": vertex 'joined': parameter 'right': 'order' is not "
                        "an input of this vertex (its inputs: clicks, orders)");
  spec = with(R"("key": ["customer"])", R"("key": ["amount"])");
  expect_refused({"run", spec},
                 spec + ": vertex 'joined': the keys differ: 'clicks' is keyed "
                        "by (user: string), 'orders' by (amount: int64) (the "
                        "same types, nullable or not, in the same order)");
  spec = with(R"("lower": "-5 s")", R"("lower": "15 s")");
  expect_refused({"run", spec},
                 spec + ": vertices[4] ('joined'): parameters 'lower' and "
                        "'upper': 15000 ms is above 10000 ms");
}

TEST_CASE("examples/clicks_to_orders.json and click_sessions.json give the "
          "answers computed here from their sample data") {
  struct event {
    std::string user;
    int64_t t;
    std::string amount;
  };
  auto read = [](const std::string& path) {
    std::vector<event> out;
    std::istringstream in{read_file(path)};
    for (std::string line; std::getline(in, line);) {
      std::istringstream fields{line};
      event e;
      std::string t;
      std::getline(fields, e.user, '\t');
      std::getline(fields, t, '\t');
      std::getline(fields, e.amount, '\t');
      e.t = std::stoll(t);
      out.push_back(e);
    }
    return out;
  };
  auto clicks = read("examples/data/clicks.tsv");
  auto orders = read("examples/data/orders.tsv");
  std::vector<std::string> joined;
  for (auto& c : clicks)
    for (auto& o : orders)
      if (c.user == o.user && o.t >= c.t && o.t <= c.t + 30000)
        joined.push_back(
          fmt::format("{}\t{}\t{}\t{}", c.user, c.t, o.t, o.amount));
  std::sort(joined.begin(), joined.end());
  REQUIRE_FALSE(joined.empty());
  auto r = run_weir({"run", "examples/clicks_to_orders.json"}, 60s);
  INFO("weir run said: " << r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(sorted_lines(r.out) == joined);

  // Sessions: a user's clicks in time order, split where two are 10 s or
  // more apart; each emits user, start, end (the last click + 10 s), count.
  std::map<std::string, std::vector<int64_t>> times;
  for (auto& c : clicks)
    times[c.user].push_back(c.t);
  auto iso = [](int64_t ms) {
    auto secs = static_cast<std::time_t>(ms / 1000);
    std::tm tm{};
    gmtime_r(&secs, &tm);
    char text[32];
    std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &tm);
    return ms % 1000 == 0 ? fmt::format("{}Z", text)
                          : fmt::format("{}.{:03}Z", text, ms % 1000);
  };
  std::vector<std::string> sessions;
  for (auto& [user, ts] : times) {
    std::sort(ts.begin(), ts.end());
    size_t first = 0;
    for (size_t i = 1; i <= ts.size(); ++i)
      if (i == ts.size() || ts[i] - ts[i - 1] >= 10000) {
        sessions.push_back(fmt::format("{}\t{}\t{}\t{}", user, iso(ts[first]),
                                       iso(ts[i - 1] + 10000), i - first));
        first = i;
      }
  }
  std::sort(sessions.begin(), sessions.end());
  auto s = run_weir({"run", "examples/click_sessions.json"}, 60s);
  INFO("weir run said: " << s.err);
  REQUIRE(s.exit_code == 0);
  CHECK(sorted_lines(s.out) == sessions);
}

TEST_CASE("a user library's window function (distinct_values) counts "
          "distinct values per key and window, on both backends") {
  // Rows "key value t": 3 keys, values repeating, over 60 s in order.
  temp_dir dir;
  std::string text;
  std::map<std::pair<std::string, int64_t>, std::set<int64_t>> distinct;
  for (int64_t i = 0; i < 6000; ++i) {
    auto key = fmt::format("k{}", i % 3);
    auto value = i * 7 % 23;
    auto t = i * 10;
    text += fmt::format("{} {} {}\n", key, value, t);
    distinct[{key, t - t % 10000}].insert(value);
  }
  std::vector<std::string> expected;
  for (auto& [at, values] : distinct)
    expected.push_back(fmt::format("{}\t{}\t{}", at.first,
                                   at.second / 1000, values.size()));
  std::sort(expected.begin(), expected.end());
  auto input = dir.write("values.txt", text);
  auto spec = dir.write("distinct.json", R"({"name": "distinct",
    "parallelism": 2,
    "vertices": [
      {"id": "lines", "operator": "text_file", "parallelism": 1,
       "params": {"path": ")" + input + R"("}},
      {"id": "parsed", "operator": "parse", "parallelism": 1,
       "params": {"format": "whitespace",
                  "schema": "key: string, value: int64, t: int64"},
       "watermarks": {"field": "t", "strategy": "monotonous"}},
      {"id": "records", "operator": "project", "parallelism": 1,
       "params": {"fields": "key, value"}},
      {"id": "distinct", "operator": "distinct_values",
       "params": {"type": "tumbling", "size": "10 s"}},
      {"id": "seconds", "operator": "map",
       "params": {"select": "key, to_int(window_start) / 1000 as start, value"}},
      {"id": "out", "operator": "stdout", "parallelism": 1}],
    "edges": [
      {"from": "lines", "to": "parsed"},
      {"from": "parsed", "to": "records"},
      {"from": "records", "to": "distinct", "partitioning": "hash"},
      {"from": "distinct", "to": "seconds"},
      {"from": "seconds", "to": "out", "partitioning": "rebalance"}]})");
  check_both_backends({spec, "--libjars", example_ops(),
                       "-Dpipeline.auto-watermark-interval=0"},
                      expected);
}
