// Typed rows end to end through the real binary: the log example against an
// independent computation, typed keys across processes, schema errors at
// planning time, and the text formats of the sinks.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cluster_fixture.hpp"
#include "process.hpp"
#include "refusal.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

/// What the log example computes, by hand: status >= 400, bytes per user;
/// a line whose status is not a number is skipped.
std::vector<std::string> expected_log_sums(const std::string& log,
                                           int64_t min_status) {
  std::map<std::string, int64_t> sums;
  std::istringstream in{log};
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields{line};
    std::string time, user, method, path, status, bytes;
    fields >> time >> user >> method >> path >> status >> bytes;
    if (status.find_first_not_of("0123456789") != std::string::npos)
      continue;
    if (std::stoll(status) >= min_status)
      sums[user] += std::stoll(bytes);
  }
  std::vector<std::string> out;
  for (auto& [user, sum] : sums)
    out.push_back(fmt::format("{}\t{}", user, sum));
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

TEST_CASE("the log example sums the bytes of failed requests per user, "
          "exactly, and reports the line it skipped") {
  auto log = read_file(source_path("examples/data/access.log"));
  for (int64_t min_status : {400, 500}) {
    auto r = run_weir({"run", source_path("examples/log_bytes.json"),
                       "--min_status", std::to_string(min_status)},
                      60s);
    REQUIRE(r.exit_code == 0);
    CHECK(sorted_lines(r.out) == expected_log_sums(log, min_status));
    CHECK(r.err.find("Skipped: 1 record (vertex 'parsed': line 18: field "
                     "'status': 'OK' is not an int64)\n")
          != std::string::npos);
  }
}

TEST_CASE("a malformed line fails the job by default, naming the line") {
  temp_dir dir;
  auto spec = dir.write("strict.json", R"({
    "name": "strict",
    "vertices": [
      {"id": "lines", "operator": "text_file", "params": {"path": "LOG"}},
      {"id": "parsed", "operator": "parse", "params": {"format": "whitespace",
         "schema": "time: timestamp, user: string, method: string, path: string, status: int64, bytes: int64"}},
      {"id": "out", "operator": "discard"}],
    "edges": [{"from": "lines", "to": "parsed"},
              {"from": "parsed", "to": "out"}]})");
  auto text = read_file(spec);
  text.replace(text.find("LOG"), 3, source_path("examples/data/access.log"));
  spec = dir.write("strict.json", text);
  auto r = run_weir({"run", spec}, 60s);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("line 18: field 'status': 'OK' is not an int64")
        != std::string::npos);
}

TEST_CASE("integer keys: a typed keyed sum is exact, embedded and across "
          "two taskmanager processes") {
  // value % 7 as k over 0..9999: each k's sum, computed here.
  std::map<int64_t, int64_t> sums;
  for (int64_t i = 0; i <= 9999; ++i)
    sums[i % 7] += i;
  std::vector<std::string> expected;
  for (auto& [k, s] : sums)
    expected.push_back(fmt::format("{}\t{}", k, s));
  std::sort(expected.begin(), expected.end());
  auto spec = source_path("examples/keyed_sum_rows.json");
  auto local = run_weir({"run", spec, "--to", "9999", "--modulus", "7"}, 60s);
  REQUIRE(local.exit_code == 0);
  CHECK(sorted_lines(local.out) == expected);

  // On a session cluster stdout is the taskmanagers': collect the rows.
  temp_dir dir;
  auto text = read_file(spec);
  text.replace(text.find("\"stdout\""), 8, "\"collect\"");
  auto collected = dir.write("collected.json", text);
  session_cluster cluster;
  cluster.add_worker("a", 2);
  cluster.add_worker("b", 2);
  // Parallelism 4 over two processes: the hash exchange crosses them.
  auto remote = cluster.client(
    {"run", collected, "-p", "4", "--to", "9999", "--modulus", "7"});
  REQUIRE(remote.exit_code == 0);
  CHECK(sorted_lines(remote.out) == expected);
}

TEST_CASE("several key fields, avg, count and nulls across a hash exchange") {
  temp_dir dir;
  auto data = dir.write("people.csv", "ann,x,10\nbob,y,\nann,x,20\nann,y,5\n"
                                      "bob,y,7\n");
  auto spec = dir.write("multi.json", fmt::format(R"({{
    "name": "multi", "parallelism": 2,
    "vertices": [
      {{"id": "lines", "operator": "text_file", "params": {{"path": "{}"}}}},
      {{"id": "rows", "operator": "parse", "params": {{"format": "csv",
         "schema": "name: string, group: string, n: int64?"}}}},
      {{"id": "mean", "operator": "avg", "params": {{"field": "n"}}}},
      {{"id": "out", "operator": "text_file", "params": {{"path": "-"}},
        "parallelism": 1}}],
    "edges": [{{"from": "lines", "to": "rows"}},
              {{"from": "rows", "to": "mean", "partitioning": "hash",
                "key": ["name", "group"]}},
              {{"from": "mean", "to": "out", "partitioning": "rebalance"}}]}})",
                                                  data));
  auto r = run_weir({"run", spec}, 60s);
  REQUIRE(r.exit_code == 0);
  CHECK(sorted_lines(r.out)
        == std::vector<std::string>{"ann\tx\t15", "ann\ty\t5", "bob\ty\t7"});
  auto info = run_weir({"info", spec}, 30s);
  REQUIRE(info.exit_code == 0);
  CHECK(info.out.find("  rows -> mean   hash by (name, group)  (name: string, "
                      "group: string, n: int64?)\n")
        != std::string::npos);
  CHECK(info.out.find("(name: string, group: string, n: double?)")
        != std::string::npos);
}

TEST_CASE("schema mismatches are one line at planning time, exit 2") {
  temp_dir dir;
  auto write = [&](const std::string& middle, const std::string& edge) {
    return dir.write("bad.json", R"({"name": "bad", "vertices": [
      {"id": "numbers", "operator": "sequence", "params": {"from": 1, "to": 3}},
      )" + middle + R"(,
      {"id": "out", "operator": "discard"}],
      "edges": [)" + edge + R"(, {"from": "v", "to": "out"}]})");
  };
  auto spec = write(R"({"id": "v", "operator": "filter",
                        "params": {"where": "value >= 'a'"}})",
                    R"({"from": "numbers", "to": "v"})");
  expect_refused({"run", spec},
                 spec + ": vertex 'v': parameter 'where': at 7: '>=' compares "
                        "int64 'value' with string 'a'");
  spec = write(R"({"id": "v", "operator": "sum", "params": {"field": "value"}})",
               R"({"from": "numbers", "to": "v", "partitioning": "hash",
                   "key": ["nope"]})");
  expect_refused({"run", spec},
                 spec + ": edge 'numbers' -> 'v': key field 'nope' is not in "
                        "(value: int64)");
  spec = write(R"({"id": "v", "operator": "map",
                   "params": {"select": "value * 2"}})",
               R"({"from": "numbers", "to": "v"})");
  auto r = run_weir({"run", spec}, 30s);
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("needs a name") != std::string::npos);
}

TEST_CASE("csv and json_lines sinks write typed fields; json_lines reads "
          "them back") {
  temp_dir dir;
  auto csv = dir.file("out.csv");
  auto json = dir.file("out.jsonl");
  auto spec = dir.write("fmt.json", fmt::format(R"({{
    "name": "fmt",
    "vertices": [
      {{"id": "numbers", "operator": "sequence", "params": {{"from": 1, "to": 3}}}},
      {{"id": "rows", "operator": "map", "params": {{"select":
         "value as n, value / 2.0 as half, value % 2 = 0 as even, concat('a,', value) as s"}}}},
      {{"id": "csv", "operator": "text_file", "params": {{"path": "{}", "format": "csv"}}}},
      {{"id": "json", "operator": "json_lines", "params": {{"path": "{}"}}}}],
    "edges": [{{"from": "numbers", "to": "rows"}},
              {{"from": "rows", "to": "csv"}},
              {{"from": "rows", "to": "json"}}]}})",
                                                 csv, json));
  auto r = run_weir({"run", spec}, 60s);
  REQUIRE(r.exit_code == 0);
  CHECK(read_file(csv)
        == "1,0.5,false,\"a,1\"\n2,1,true,\"a,2\"\n3,1.5,false,\"a,3\"\n");
  CHECK(read_file(json)
        == "{\"n\":1,\"half\":0.5,\"even\":false,\"s\":\"a,1\"}\n"
           "{\"n\":2,\"half\":1,\"even\":true,\"s\":\"a,2\"}\n"
           "{\"n\":3,\"half\":1.5,\"even\":false,\"s\":\"a,3\"}\n");
  auto back = dir.write("back.json", fmt::format(R"({{
    "name": "back",
    "vertices": [
      {{"id": "in", "operator": "json_lines", "params": {{"path": "{}",
         "schema": "n: int64, half: double, even: bool, s: string"}}}},
      {{"id": "big", "operator": "filter", "params": {{"where": "half > 0.5 and not even"}}}},
      {{"id": "out", "operator": "text_file", "params": {{"path": "-"}}}}],
    "edges": [{{"from": "in", "to": "big"}}, {{"from": "big", "to": "out"}}]}})",
                                                 json));
  auto b = run_weir({"run", back}, 60s);
  REQUIRE(b.exit_code == 0);
  CHECK(b.out == "3\t1.5\tfalse\ta,3\n");
}

TEST_CASE("a user operator reads and writes fields by name (kilobytes in the "
          "example library)") {
  temp_dir dir;
  auto spec = dir.write("kb.json", fmt::format(R"({{
    "name": "kb",
    "vertices": [
      {{"id": "numbers", "operator": "sequence", "params": {{"from": 1023, "to": 1025}}}},
      {{"id": "named", "operator": "project", "params": {{"fields": "value as bytes"}}}},
      {{"id": "kb", "operator": "kilobytes", "params": {{"field": "bytes"}}}},
      {{"id": "out", "operator": "text_file", "params": {{"path": "-"}}}}],
    "edges": [{{"from": "numbers", "to": "named"}}, {{"from": "named", "to": "kb"}},
              {{"from": "kb", "to": "out"}}]}})"));
  auto ops = std::string{std::getenv("WEIR_EXAMPLE_OPS")};
  auto r = run_weir({"run", spec, "--libjars", ops}, 60s);
  REQUIRE(r.exit_code == 0);
  CHECK(r.out == "1023\t0.9990234375\n1024\t1\n1025\t1.0009765625\n");
  auto info = run_weir({"info", spec, "--libjars", ops}, 30s);
  REQUIRE(info.exit_code == 0);
  CHECK(info.out.find("  kb -> out         forward  (bytes: int64, bytes_kb: "
                      "double)  chained\n")
        != std::string::npos);
  // A field of the wrong type is a planning error naming it.
  auto bad = dir.write("bad.json", fmt::format(R"({{
    "name": "bad",
    "vertices": [
      {{"id": "lines", "operator": "text_file", "params": {{"path": "{}"}}}},
      {{"id": "kb", "operator": "kilobytes", "params": {{"field": "value"}}}},
      {{"id": "out", "operator": "discard"}}],
    "edges": [{{"from": "lines", "to": "kb"}}, {{"from": "kb", "to": "out"}}]}})",
                                                source_path("examples/data/access.log")));
  auto refused = run_weir({"run", bad, "--libjars", ops}, 30s);
  CHECK(refused.exit_code == 2);
  CHECK(refused.err == bad + ": vertex 'kb': parameter 'field': 'value' is not "
                             "an int64 field of (value: string)\n");
}

TEST_CASE("a savepoint taken before rows restores: keyed counts and the "
          "generator's position carry over exactly") {
  // tests/data/savepoint-pre-rows: weir before rows stopped this job (an
  // endless generator of 5 keys into a keyed count, parallelism 2) after
  // 6,318 records. The same graph, bounded at 20,000 records, resumes it.
  temp_dir dir;
  auto out = dir.file("counts");
  auto spec = dir.write("bounded.json", fmt::format(R"({{
    "name": "bounded", "parallelism": 2,
    "config": {{"state.backend.type": "hashmap"}},
    "vertices": [
      {{"id": "events", "operator": "generator", "params": {{"count": 20000, "keys": 5}}}},
      {{"id": "counts", "operator": "count"}},
      {{"id": "out", "operator": "text_file", "params": {{"path": "{}"}}}}],
    "edges": [{{"from": "events", "to": "counts", "partitioning": "hash"}},
              {{"from": "counts", "to": "out", "partitioning": "forward"}}]}})",
                                                   out));
  auto r = run_weir(
    {"run", "-s", source_path("tests/data/savepoint-pre-rows"), spec}, 60s);
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("(13682 records in, 5 records out)") != std::string::npos);
  std::string all;
  for (auto& part : {"/part-0", "/part-1"})
    all += read_file(out + part);
  CHECK(sorted_lines(all)
        == std::vector<std::string>{"key-0\t4000", "key-1\t4000",
                                    "key-2\t4000", "key-3\t4000",
                                    "key-4\t4000"});
}

namespace {

/// generator (unbounded at `rate`, or `count` records) → (k: value % 5,
/// g: key, value) → sum and avg of value keyed by (k, g) on `backend`,
/// checkpoints every 200 ms.
std::string typed_state_spec(const temp_dir& dir, const std::string& name,
                             int64_t count, int64_t rate,
                             const std::string& backend) {
  return dir.write(name + ".json", fmt::format(R"({{
    "name": "{}", "parallelism": 2,
    "config": {{"execution.checkpointing.interval": "200 ms",
               "state.backend.type": "{}"}},
    "vertices": [
      {{"id": "events", "operator": "generator", "params": {{"count": {}, "rate": {}, "keys": 3}}}},
      {{"id": "typed", "operator": "map", "params": {{"select": "value % 5 as k, key as g, value"}}}},
      {{"id": "sums", "operator": "sum", "params": {{"field": "value"}}}},
      {{"id": "out", "operator": "collect"}}],
    "edges": [{{"from": "events", "to": "typed"}},
              {{"from": "typed", "to": "sums", "partitioning": "hash", "key": ["k", "g"]}},
              {{"from": "sums", "to": "out"}}]}})",
                                               name, backend, count, rate));
}

} // namespace

TEST_CASE("typed keyed state (two key fields, one an integer) survives stop "
          "with a savepoint and resumes exactly, on both state backends") {
  // What the bounded job must end with: value i of 0..19999 summed by
  // (i % 5, "key-" + i % 3).
  std::map<std::string, int64_t> sums;
  for (int64_t i = 0; i < 20000; ++i)
    sums[fmt::format("{}\tkey-{}", i % 5, i % 3)] += i;
  std::vector<std::string> expected;
  for (auto& [k, s] : sums)
    expected.push_back(fmt::format("{}\t{}", k, s));
  std::sort(expected.begin(), expected.end());
  for (std::string backend : {"hashmap", "rocksdb"}) {
    CAPTURE(backend);
    session_cluster cluster;
    cluster.add_worker("a", 2);
    cluster.add_worker("b", 2);
    auto endless = typed_state_spec(cluster.dir, "endless", -1, 2000, backend);
    auto started = cluster.client({"run", "-d", endless});
    REQUIRE(started.exit_code == 0);
    auto id = lines_of(started.out).back(); // -d prints the job id last
    REQUIRE(cluster.jobmanager->wait_for_stderr("(endless) completed checkpoint 3 ", 30s));
    auto stopped = cluster.client(
      {"stop", id, "--savepointPath", cluster.dir.file("savepoints")});
    REQUIRE(stopped.exit_code == 0);
    const std::string prefix = "Savepoint completed. Path: ";
    auto at = stopped.out.find(prefix);
    REQUIRE(at != std::string::npos);
    auto savepoint = stopped.out.substr(at + prefix.size());
    savepoint = savepoint.substr(0, savepoint.find('\n'));
    auto bounded = typed_state_spec(cluster.dir, "bounded", 20000, 0, backend);
    auto r = cluster.client({"run", "-s", savepoint, bounded});
    REQUIRE(r.exit_code == 0);
    CHECK(sorted_lines(r.out) == expected);
  }
}

TEST_CASE("rows of three fields through broadcast and rebalance on a session "
          "cluster of two taskmanagers arrive whole") {
  temp_dir dir;
  auto spec = dir.write("fan.json", R"({
    "name": "fan", "parallelism": 2,
    "vertices": [
      {"id": "numbers", "operator": "sequence", "params": {"from": 1, "to": 1000}},
      {"id": "rows", "operator": "map", "params": {"select":
         "value as n, concat('r', value) as s, value / 4.0 as q"}},
      {"id": "copies", "operator": "project", "params": {"fields": "n, s, q"}},
      {"id": "out", "operator": "collect"}],
    "edges": [{"from": "numbers", "to": "rows"},
              {"from": "rows", "to": "copies", "partitioning": "broadcast"},
              {"from": "copies", "to": "out", "partitioning": "rebalance"}]})");
  session_cluster cluster;
  cluster.add_worker("a", 3);
  cluster.add_worker("b", 3);
  auto r = cluster.client({"run", spec});
  REQUIRE(r.exit_code == 0);
  // Broadcast to 2 consumers: every row twice.
  std::vector<std::string> expected;
  for (int n = 1; n <= 1000; ++n)
    for (int copy = 0; copy < 2; ++copy)
      expected.push_back(fmt::format("{}\tr{}\t{}", n, n, n / 4.0));
  std::sort(expected.begin(), expected.end());
  CHECK(sorted_lines(r.out) == expected);
}
