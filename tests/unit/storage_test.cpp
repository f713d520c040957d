#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <doctest/doctest.h>
#include <rocksdb/db.h>
#include <rocksdb/status.h>

#include <nlohmann/json.hpp>

#include "messages/errors.hpp"
#include "messages/file_names.hpp"
#include "temp_dir.hpp"
#include "tests/rows.hpp"
#include "storage/blob_store.hpp"
#include "storage/finish_job.hpp"
#include "storage/job_graph_store.hpp"
#include "storage/job_result_store.hpp"
#include "storage/kv_store.hpp"
#include "storage/memory_store.hpp"
#include "storage/rocksdb_store.hpp"
#include "storage/status.hpp"

using namespace weir;
using namespace weir::storage;
using weir::storage::column;
using weir::test::temp_dir;

namespace {

// -- fixtures -----------------------------------------------------------------

/// Fails the test with the error's text.
template <class T>
T take(caf::expected<T> x) {
  if (!x)
    FAIL(describe(x.error()));
  return std::move(*x);
}

void check_ok(const caf::error& err) {
  CHECK_MESSAGE(!err, describe(err));
}

struct memory_backend {
  std::unique_ptr<kv_store> open() { return std::make_unique<memory_store>(); }
};

struct rocksdb_backend {
  temp_dir dir;
  std::unique_ptr<kv_store> open() {
    return take(open_rocksdb_store(dir.sub("db")));
  }
};

} // namespace

TYPE_TO_STRING(memory_backend);
TYPE_TO_STRING(rocksdb_backend);

#define BACKENDS memory_backend, rocksdb_backend

namespace {

using pairs = std::vector<std::pair<std::string, std::string>>;

pairs scan_all(kv_store& kv, storage::column c, std::string_view prefix = {}) {
  pairs result;
  check_ok(kv.scan_prefix(c, prefix, [&](auto key, auto value) {
    result.emplace_back(key, value);
  }));
  return result;
}

std::optional<std::string> get(kv_store& kv, storage::column c, std::string_view key) {
  return take(kv.get(c, key));
}

/// `text` with the first `from` replaced by `to`.
std::string patched(std::string text, std::string_view from,
                    std::string_view to) {
  auto pos = text.find(from);
  REQUIRE(pos != std::string::npos);
  return text.replace(pos, from.size(), to);
}

// -- sample data --------------------------------------------------------------

const job_id id1{0, 1};
const job_id id2{0, 2};
const job_id id3{0, 3};
const job_id id4{0, 4};
const job_id id5{0, 5};
const job_id id6{0, 6};

job_graph make_graph(job_id id) {
  job_graph g;
  g.id = id;
  g.name = "word count \"é\"";
  g.vertices = {
    {"src", "text_file", {{"path", "/data/in.txt"}, {"note", "a\nb ü"}}, 2},
    {"split", "flat_map", {{"fn", "tokenize"}}, 2},
    {"count", "count", {}, 4},
    {"sink", "collect", {}, 1},
  };
  g.edges = {
    {"src", "split", partitioning::forward},
    {"split", "count", partitioning::hash},
    {"count", "sink", partitioning::rebalance},
  };
  return g;
}

job_result make_result(job_id id) {
  job_result r;
  r.id = id;
  r.name = "word count";
  r.state = job_state::failed;
  r.error = "vertex 'count': boom";
  r.start_time_ms = 1700000000000;
  r.end_time_ms = 1700000004321;
  r.metrics = io_metrics{1000, 42};
  r.metrics.vertices = {{"lines", 1000, 1000, {}},
                        {"count", 1000, 42, {{"bad_lines", 3}, {"never", 0}}}};
  r.collected = test::sample_tables();
  r.graph_fingerprint = 0xfedcba9876543210; // above INT64_MAX: stored as hex
  r.exit_status = 7; // a driver job's, as its driver returned it
  return r;
}

} // namespace

// -- kv_store, against every backend ------------------------------------------

TEST_CASE_TEMPLATE("kv_store: put, get and remove", backend, BACKENDS) {
  backend b;
  auto kv = b.open();
  CHECK(get(*kv, storage::column::blobs, "k") == std::nullopt);
  check_ok(kv->put(storage::column::blobs, "k", "v1", durability::synced));
  check_ok(kv->put(storage::column::checkpoints, "k", "other", durability::unsynced));
  CHECK(get(*kv, storage::column::blobs, "k") == "v1");
  check_ok(kv->put(storage::column::blobs, "k", std::string("v\0 2", 4),
                   durability::synced));
  CHECK(get(*kv, storage::column::blobs, "k") == std::string("v\0 2", 4));
  check_ok(kv->remove(storage::column::blobs, "k", durability::synced));
  CHECK(get(*kv, storage::column::blobs, "k") == std::nullopt);
  check_ok(kv->remove(storage::column::blobs, "k", durability::synced));
  CHECK(get(*kv, storage::column::checkpoints, "k") == "other");
}

TEST_CASE_TEMPLATE("kv_store: scan in bytewise key order", backend, BACKENDS) {
  backend b;
  auto kv = b.open();
  for (auto key : {"b", "\xff", "ab", "B", "a", "a\x01"})
    check_ok(kv->put(storage::column::checkpoints, key, std::string{"v"} + key,
                     durability::synced));
  check_ok(kv->put(storage::column::blobs, "a", "elsewhere", durability::synced));
  CHECK(scan_all(*kv, storage::column::checkpoints)
        == pairs{{"B", "vB"}, {"a", "va"}, {"a\x01", "va\x01"},
                 {"ab", "vab"}, {"b", "vb"}, {"\xff", "v\xff"}});
  CHECK(scan_all(*kv, storage::column::checkpoints, "a")
        == pairs{{"a", "va"}, {"a\x01", "va\x01"}, {"ab", "vab"}});
  CHECK(scan_all(*kv, storage::column::checkpoints, "c").empty());
  CHECK(scan_all(*kv, storage::column::job_graphs).empty());
}

TEST_CASE_TEMPLATE("kv_store: a scan reads a snapshot and may write", backend,
                   BACKENDS) {
  backend b;
  auto kv = b.open();
  check_ok(kv->put(storage::column::blobs, "a", "1", durability::synced));
  check_ok(kv->put(storage::column::blobs, "b", "2", durability::synced));
  std::vector<std::string> seen;
  check_ok(kv->scan(storage::column::blobs, [&](auto key, auto) {
    seen.emplace_back(key);
    check_ok(kv->put(storage::column::blobs, "c", "3", durability::synced));
    check_ok(kv->remove(storage::column::blobs, "b", durability::synced));
  }));
  CHECK(seen == std::vector<std::string>{"a", "b"});
  CHECK(scan_all(*kv, storage::column::blobs) == pairs{{"a", "1"}, {"c", "3"}});
}

TEST_CASE_TEMPLATE("kv_store: a write batch applies every change in order",
                   backend, BACKENDS) {
  backend b;
  auto kv = b.open();
  check_ok(kv->put(storage::column::job_graphs, "old", "x", durability::synced));
  check_ok(kv->put(storage::column::blobs, "again", "x", durability::synced));
  write_batch batch;
  CHECK(batch.empty());
  check_ok(kv->write(batch, durability::synced));
  batch.put(storage::column::job_results, "r", "1");
  batch.remove(storage::column::job_graphs, "old");
  batch.put(storage::column::checkpoints, "gone", "1");
  batch.remove(storage::column::checkpoints, "gone");
  batch.remove(storage::column::blobs, "again");
  batch.put(storage::column::blobs, "again", "2");
  CHECK(batch.ops().size() == 6);
  check_ok(kv->write(batch, durability::synced));
  CHECK(scan_all(*kv, storage::column::job_results) == pairs{{"r", "1"}});
  CHECK(scan_all(*kv, storage::column::job_graphs).empty());
  CHECK(scan_all(*kv, storage::column::checkpoints).empty());
  CHECK(scan_all(*kv, storage::column::blobs) == pairs{{"again", "2"}});
}

// -- typed tables, against every backend --------------------------------------

TEST_CASE_TEMPLATE("job_graph_store: graphs round trip", backend, BACKENDS) {
  backend b;
  auto kv = b.open();
  job_graph_store graphs{*kv};
  auto g1 = make_graph(id1);
  auto g2 = make_graph(id2);
  g2.name = "second";
  g2.edges.back().part = partitioning::broadcast;
  check_ok(graphs.put(g2));
  check_ok(graphs.put(g1));
  CHECK(take(graphs.get(id1)) == g1);
  CHECK(take(graphs.get(id3)) == std::nullopt);
  auto all = take(graphs.load_all());
  CHECK(all.graphs == std::vector<job_graph>{g1, g2});
  CHECK(all.problems.empty());
  check_ok(graphs.remove(id1));
  check_ok(graphs.remove(id1));
  CHECK(take(graphs.get(id1)) == std::nullopt);
  CHECK(take(graphs.load_all()).graphs == std::vector<job_graph>{g2});
}

TEST_CASE_TEMPLATE("job_graph_store: schemas and keys round trip", backend,
                   BACKENDS) {
  backend b;
  auto kv = b.open();
  job_graph_store graphs{*kv};
  auto g = make_graph(id1);
  auto every_type = parse_schema("i: int64, d: double, b: bool, s: string, "
                                 "y: bytes, t: timestamp, n: string?");
  REQUIRE(every_type.problem.empty());
  g.vertices[0].output = every_type.value;
  g.vertices[1].output = default_schema::keyed_lines();
  g.vertices[2].output = default_schema::keyed_numbers();
  g.edges[1].key = {"key", "value"};
  // Event time: a recovered job makes the same watermarks.
  g.vertices[0].watermarks = {"t", 5000, 60000, 0};
  // A side output and the edge that takes it.
  g.vertices[1].side_outputs = {{"late", default_schema::keyed_lines()}};
  g.edges[1].output = "late";
  check_ok(graphs.put(g));
  CHECK(take(graphs.get(id1)) == g);
  CHECK(take(graphs.load_all()).graphs == std::vector<job_graph>{g});
}

TEST_CASE_TEMPLATE("job_graph_store: a graph stored before schemas and keys "
                   "loads without them, and is stored as before",
                   backend, BACKENDS) {
  backend b;
  auto kv = b.open();
  job_graph_store graphs{*kv};
  // A record as weir wrote it before rows.
  const std::string old
    = R"({"edges":[{"from":"src","partitioning":"hash","to":"c"},)"
      R"({"from":"c","partitioning":"rebalance","to":"out"}],)"
      R"("format_version":1,"id":"00000000000000000000000000000002",)"
      R"("name":"old","vertices":[{"id":"src","op":"sequence",)"
      R"("parallelism":1,"params":{"from":"1","to":"9"}},)"
      R"({"id":"c","op":"count","parallelism":2,"params":{}},)"
      R"({"id":"out","op":"collect","parallelism":1,"params":{}}]})";
  check_ok(kv->put(storage::column::job_graphs, id2.to_string(), old,
                   durability::synced));
  auto g = take(graphs.get(id2));
  REQUIRE(g);
  CHECK(g->name == "old");
  REQUIRE(g->vertices.size() == 3u);
  for (auto& v : g->vertices)
    CHECK(v.output.empty());
  REQUIRE(g->edges.size() == 2u);
  CHECK(g->edges[0].part == partitioning::hash);
  CHECK(g->edges[0].key.empty());
  // Stored again unchanged, it is the same record (and fingerprint).
  check_ok(graphs.put(*g));
  CHECK(get(*kv, storage::column::job_graphs, id2.to_string()) == old);
}

TEST_CASE("job_graph_fingerprint: leaves out what the planner derives") {
  auto g = make_graph(id1);
  auto before_rows = job_graph_fingerprint(g);
  g.vertices[0].output = default_schema::keyed_lines();
  g.edges[1].key = {"key"}; // the default
  CHECK(job_graph_fingerprint(g) == before_rows);
  g.edges[1].key = {"value"};
  CHECK(job_graph_fingerprint(g) != before_rows);
  g.edges[1].key = {};
  g.vertices[0].params["path"] = "/data/other.txt";
  CHECK(job_graph_fingerprint(g) != before_rows);
}

TEST_CASE_TEMPLATE("job_graph_store: bad schemas and keys are reported",
                   backend, BACKENDS) {
  backend b;
  auto kv = b.open();
  job_graph_store graphs{*kv};
  auto g = make_graph(id1);
  g.vertices[0].output = default_schema::keyed_lines();
  g.edges[1].key = {"key"};
  check_ok(graphs.put(g));
  auto text = get(*kv, storage::column::job_graphs, id1.to_string()).value();
  auto store = [&](job_id id, std::string_view from, std::string_view to) {
    auto record = patched(patched(text, id1.to_string(), id.to_string()),
                          from, to);
    check_ok(kv->put(storage::column::job_graphs, id.to_string(), record,
                     durability::synced));
  };
  store(id2, R"("type":"string")", R"("type":"float")");
  store(id3, R"("key":["key"])", R"("key":["key",7])");
  store(id4, R"("key":["key"])", R"("key":"key")");
  store(id5, R"("nullable":false)", R"("nullable":"no")");
  auto all = take(graphs.load_all());
  CHECK(all.graphs == std::vector<job_graph>{g});
  CHECK(all.problems
        == std::vector<std::string>{
          "job_graphs/00000000000000000000000000000002: field "
          "'vertices[0].output[0].type' has unknown value 'float'",
          "job_graphs/00000000000000000000000000000003: field "
          "'edges[1].key[1]' is not a string",
          "job_graphs/00000000000000000000000000000004: field 'edges[1].key' "
          "is not an array",
          "job_graphs/00000000000000000000000000000005: field "
          "'vertices[0].output[0].nullable' is not a boolean",
        });
}

TEST_CASE_TEMPLATE("job_result_store: a result is dirty, then clean", backend,
                   BACKENDS) {
  backend b;
  auto kv = b.open();
  job_result_store results{*kv};
  auto r1 = make_result(id1);
  auto r2 = make_result(id2);
  r2.state = job_state::finished;
  r2.error.clear();
  r2.collected.clear();
  check_ok(results.put_dirty(r1));
  check_ok(results.put_dirty(r2));
  CHECK(take(results.get(id1)) == job_result_entry{r1, true});
  check_ok(results.mark_clean(id1));
  CHECK(take(results.get(id1)) == job_result_entry{r1, false});
  check_ok(results.mark_clean(id1));
  CHECK(take(results.get(id1)) == job_result_entry{r1, false});
  CHECK(take(results.get(id3)) == std::nullopt);
  auto all = take(results.load_all());
  CHECK(all.entries
        == std::vector<job_result_entry>{{r1, false}, {r2, true}});
  CHECK(all.problems.empty());
  auto err = results.mark_clean(id3);
  CHECK(err.code() == static_cast<uint8_t>(errc::unknown_job));
  CHECK(describe(err)
        == "job_results/00000000000000000000000000000003: no result stored");
}

TEST_CASE_TEMPLATE("job_result_store: records stored before rows read back "
                   "as rows", backend, BACKENDS) {
  backend b;
  auto kv = b.open();
  job_result_store results{*kv};
  auto r = make_result(id1);
  r.collected.clear();
  check_ok(results.put_dirty(r));
  // The record as weir wrote it before rows: "collected" records.
  auto doc = nlohmann::json::parse(
    *get(*kv, storage::column::job_results, id1.to_string()));
  doc.erase("collected_rows");
  doc["collected"] = nlohmann::json::parse(
    R"([{"key": "a", "text": "", "num": 3, "timestamp": 7, "is_text": false},)"
    R"( {"key": "", "text": "", "num": -1, "timestamp": 0, "is_text": false}])");
  check_ok(kv->put(storage::column::job_results, id1.to_string(), doc.dump(),
                   durability::synced));
  auto back = take(results.get(id1));
  REQUIRE(back);
  r.collected = test::tables_of({record::integer("a", 3, 7), record::integer("", -1)},
                          "");
  CHECK(back->result == r);
  // Texts and numbers mixed (a driver's lines and ...): all as texts.
  doc["collected"] = nlohmann::json::parse(
    R"([{"key": "", "text": "hi", "num": 0, "timestamp": 0, "is_text": true},)"
    R"( {"key": "", "text": "", "num": 5, "timestamp": 0, "is_text": false}])");
  check_ok(kv->put(storage::column::job_results, id1.to_string(), doc.dump(),
                   durability::synced));
  back = take(results.get(id1));
  REQUIRE(back);
  r.collected = test::tables_of({record::string("", "hi"), record::string("", "5")},
                          "");
  CHECK(back->result == r);
}

TEST_CASE_TEMPLATE("finish_job: result dirty, then graph gone and result clean",
                   backend, BACKENDS) {
  backend b;
  auto kv = b.open();
  job_graph_store graphs{*kv};
  job_result_store results{*kv};
  check_ok(graphs.put(make_graph(id1)));
  check_ok(graphs.put(make_graph(id2)));
  check_ok(kv->put(storage::column::checkpoints, id1.to_string() + "/7", "cp",
                   durability::synced));
  write_batch cleanup;
  cleanup.remove(storage::column::checkpoints, id1.to_string() + "/7");
  auto r1 = make_result(id1);
  check_ok(finish_job(*kv, r1, std::move(cleanup)));
  CHECK(take(graphs.get(id1)) == std::nullopt);
  CHECK(take(graphs.get(id2)) == make_graph(id2));
  CHECK(take(results.get(id1)) == job_result_entry{r1, false});
  CHECK(scan_all(*kv, storage::column::checkpoints).empty());
  // Recovery after a crash between the two steps: dirty result, graph kept.
  auto r2 = make_result(id2);
  check_ok(results.put_dirty(r2));
  check_ok(finish_job(*kv, r2));
  CHECK(take(graphs.load_all()).graphs.empty());
  CHECK(take(results.get(id2)) == job_result_entry{r2, false});
}

TEST_CASE_TEMPLATE("job_graph_store: corrupt records are reported and skipped",
                   backend, BACKENDS) {
  backend b;
  auto kv = b.open();
  job_graph_store graphs{*kv};
  auto good = make_graph(id3);
  check_ok(graphs.put(good));
  auto raw = [&](std::string_view key, std::string_view value) {
    check_ok(kv->put(storage::column::job_graphs, key, value, durability::synced));
  };
  auto hex = [](job_id id) { return id.to_string(); };
  raw(hex(id1), "{oops");
  raw(hex(id2), R"({"format_version":2,"id":")" + hex(id2) + R"("})");
  raw(hex(id4), R"({"format_version":1,"id":")" + hex(id4)
                  + R"(","name":"x","vertices":[{"id":"src","params":{},)"
                    R"("parallelism":1}],"edges":[]})");
  auto zero = make_graph(id6);
  zero.vertices[3].parallelism = 0;
  check_ok(graphs.put(zero));
  raw(hex(id5), get(*kv, storage::column::job_graphs, hex(id6)).value());
  raw("ABC", "{}");
  raw(std::string("\0\xff", 2), "{}");
  auto all = take(graphs.load_all());
  CHECK(all.graphs == std::vector<job_graph>{good});
  CHECK(all.problems
        == std::vector<std::string>{
          "job_graphs/\\x00\\xff: key is not a job id",
          "job_graphs/00000000000000000000000000000001: invalid JSON at byte 2",
          "job_graphs/00000000000000000000000000000002: unknown "
          "format_version 2",
          "job_graphs/00000000000000000000000000000004: missing field "
          "'vertices[0].op'",
          "job_graphs/00000000000000000000000000000005: key does not match "
          "the record's id 00000000000000000000000000000006",
          "job_graphs/00000000000000000000000000000006: vertex 'sink': "
          "parallelism 0 is outside [1, 32768]",
          "job_graphs/ABC: key is not a job id",
        });
  auto err = graphs.get(id1);
  REQUIRE(!err);
  CHECK(err.error().code() == static_cast<uint8_t>(errc::storage_failure));
  CHECK(describe(err.error()) == all.problems[1]);
}

TEST_CASE_TEMPLATE("job_result_store: corrupt records are reported and skipped",
                   backend, BACKENDS) {
  backend b;
  auto kv = b.open();
  job_result_store results{*kv};
  auto good = make_result(id6);
  check_ok(results.put_dirty(good));
  auto raw = [&](job_id id, std::string_view value) {
    check_ok(kv->put(storage::column::job_results, id.to_string(), value,
                     durability::synced));
  };
  raw(id1, "[1,2]");
  raw(id2, R"({"id":"x"})");
  auto stored = [&](const job_result& r) {
    check_ok(results.put_dirty(r));
    return get(*kv, storage::column::job_results, r.id.to_string()).value();
  };
  auto r3 = make_result(id3);
  r3.state = job_state::running;
  raw(id3, patched(stored(r3), "RUNNING", "BOGUS\\n"));
  raw(id4, patched(stored(make_result(id4)), R"("records_in":1000)",
                   R"("records_in":"1000")"));
  std::string second = R"(,{"batch":)";
  auto r5 = stored(make_result(id5));
  raw(id5, patched(r5, second, ",7" + second));
  const job_id id7{0, 7};
  raw(id7, patched(stored(make_result(id7)), R"("schema":"(name: string?)",
                   R"("schema":"(name: int64?)"));
  auto all = take(results.load_all());
  CHECK(all.entries == std::vector<job_result_entry>{{good, true}});
  CHECK(all.problems
        == std::vector<std::string>{
          "job_results/00000000000000000000000000000001: record is not a "
          "JSON object",
          "job_results/00000000000000000000000000000002: missing field "
          "'format_version'",
          "job_results/00000000000000000000000000000003: field 'state' has "
          "unknown value 'BOGUS\\x0a'",
          "job_results/00000000000000000000000000000004: field "
          "'metrics.records_in' is not an integer",
          "job_results/00000000000000000000000000000005: field "
          "'collected_rows[1]' is not an object",
          "job_results/00000000000000000000000000000007: field "
          "'collected_rows[1].batch' is not a batch of rows of the schema "
          "(base64 of its binary form)",
        });
  auto err = results.mark_clean(id3);
  CHECK(describe(err) == all.problems[2]);
}

// -- RocksDB only -------------------------------------------------------------

TEST_CASE("rocksdb_store: data survives closing and reopening") {
  temp_dir dir;
  auto path = dir.sub("a/b/db");
  auto g = make_graph(id1);
  auto r = make_result(id2);
  {
    auto kv = take(open_rocksdb_store(path));
    check_ok(kv->put(storage::column::blobs, "synced", "1", durability::synced));
    check_ok(kv->put(storage::column::blobs, "unsynced", "2", durability::unsynced));
    write_batch batch;
    batch.put(storage::column::checkpoints, "cp", "3");
    check_ok(kv->write(batch, durability::synced));
    check_ok(job_graph_store{*kv}.put(g));
    check_ok(job_result_store{*kv}.put_dirty(r));
  }
  auto kv = take(rocksdb_store::open(path));
  CHECK(kv->path() == path);
  CHECK(scan_all(*kv, storage::column::blobs)
        == pairs{{"synced", "1"}, {"unsynced", "2"}});
  CHECK(get(*kv, storage::column::checkpoints, "cp") == "3");
  CHECK(take(job_graph_store{*kv}.get(id1)) == g);
  CHECK(take(job_result_store{*kv}.get(id2)) == job_result_entry{r, true});
}

TEST_CASE("rocksdb_store: a directory open elsewhere is refused by path") {
  temp_dir dir;
  auto path = dir.sub("db");
  auto first = take(open_rocksdb_store(path));
  auto second = open_rocksdb_store(path);
  REQUIRE(!second);
  auto text = describe(second.error());
  CHECK(second.error().code() == static_cast<uint8_t>(errc::storage_locked));
  CHECK(text.rfind(path + ": cannot open store: IO error: ", 0) == 0);
  CHECK(text.find(path + "/LOCK") != std::string::npos);
  CHECK(text.find('\n') == std::string::npos);
  first.reset();
  CHECK(take(open_rocksdb_store(path)) != nullptr);
}

TEST_CASE("rocksdb_store: a directory that cannot be created is refused") {
  temp_dir dir;
  std::ofstream{dir.sub("file")} << "not a directory";
  auto path = dir.sub("file/db");
  auto kv = open_rocksdb_store(path);
  REQUIRE(!kv);
  CHECK(kv.error().code() == static_cast<uint8_t>(errc::storage_failure));
  CHECK(describe(kv.error())
        == path + ": cannot create directory: Not a directory");
}

TEST_CASE("rocksdb_store: opens a database with unknown column families") {
  temp_dir dir;
  auto path = dir.sub("db");
  {
    rocksdb::Options opts;
    opts.create_if_missing = true;
    rocksdb::DB* raw = nullptr;
    REQUIRE(rocksdb::DB::Open(opts, path, &raw).ok());
    std::unique_ptr<rocksdb::DB> db{raw};
    rocksdb::ColumnFamilyHandle* cf = nullptr;
    REQUIRE(db->CreateColumnFamily({}, "from_the_future", &cf).ok());
    REQUIRE(db->DestroyColumnFamilyHandle(cf).ok());
  }
  auto kv = take(open_rocksdb_store(path));
  check_ok(kv->put(storage::column::job_graphs, "k", "v", durability::synced));
  CHECK(get(*kv, storage::column::job_graphs, "k") == "v");
}

// -- status translation and key names -----------------------------------------

TEST_CASE("to_error: one line naming the store, the operation and the key") {
  CHECK(!to_error(rocksdb::Status::OK(), "/p", "put", "job_graphs/k"));
  auto err = to_error(rocksdb::Status::IOError("disk full\nretry"), "/p",
                      "put", "job_graphs/k");
  CHECK(err.code() == static_cast<uint8_t>(errc::storage_failure));
  CHECK(err.category() == errc_category());
  CHECK(describe(err) == "/p: put job_graphs/k: IO error: disk full retry");
  CHECK(describe(to_error(rocksdb::Status::Corruption("bad block"), "/p",
                          "cannot open store"))
        == "/p: cannot open store: Corruption: bad block");
}

TEST_CASE("key_name: names the column and escapes unprintable bytes") {
  CHECK(to_string(storage::column::job_results) == "job_results");
  CHECK(key_name(storage::column::blobs, "ab c") == "blobs/ab c");
  CHECK(key_name(storage::column::checkpoints, std::string("a\n\\\0\x7f", 5))
        == "checkpoints/a\\x0a\\x5c\\x00\\x7f");
}

TEST_CASE("content_hash: what is_content_hash accepts (the names blobs travel by)") {
  for (auto bytes : {std::string{}, std::string{"x"}, std::string(1000, '\xff')})
    CHECK(is_content_hash(content_hash(bytes)));
}
