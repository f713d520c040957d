// claim_state_dir: a state directory remembers the cluster that created it.
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <system_error>

#include <doctest/doctest.h>

#include "messages/errors.hpp"
#include "temp_dir.hpp"
#include "storage/job_graph_store.hpp"
#include "storage/job_result_store.hpp"
#include "storage/memory_store.hpp"
#include "storage/rocksdb_store.hpp"
#include "storage/state_identity.hpp"

using namespace weir;
using namespace weir::storage;
using weir::test::temp_dir;

namespace {

/// What claim_state_dir says, "" when the store may be used.
std::string problem_of(const caf::error& err) {
  return err ? describe(err) : std::string{};
}

/// The memory backend keeps one store; "reopening" hands out the same one.
struct memory_backend {
  std::shared_ptr<memory_store> kv = std::make_shared<memory_store>();
  std::string dir = "(memory)";
  std::shared_ptr<kv_store> open() { return kv; }
};

/// The RocksDB backend reopens the directory each time (the previous store
/// must be gone: RocksDB's lock).
struct rocksdb_backend {
  temp_dir tmp;
  std::string dir = tmp.path() + "/state";
  std::shared_ptr<kv_store> open() {
    auto kv = open_rocksdb_store(dir);
    if (!kv)
      FAIL(describe(kv.error()));
    return std::shared_ptr<kv_store>{std::move(*kv)};
  }
};

std::optional<std::string> identity(kv_store& kv) {
  auto v = kv.get(identity_column, identity_key);
  REQUIRE(v);
  return *v;
}

} // namespace

#define BACKENDS memory_backend, rocksdb_backend

TEST_CASE_TEMPLATE("claim_state_dir: a new store is stamped with the cluster id",
                   backend, BACKENDS) {
  backend b;
  {
    auto kv = b.open();
    CHECK(identity(*kv) == std::nullopt);
    CHECK(!claim_state_dir(*kv, "a", b.dir));
    CHECK(identity(*kv) == R"({"cluster_id":"a","format_version":1})");
    // Claiming again for the same cluster changes nothing.
    CHECK(!claim_state_dir(*kv, "a", b.dir));
    CHECK(identity(*kv) == R"({"cluster_id":"a","format_version":1})");
  }
  auto kv = b.open();
  CHECK(!claim_state_dir(*kv, "a", b.dir));
}

TEST_CASE_TEMPLATE("claim_state_dir: another cluster id is refused, by name",
                   backend, BACKENDS) {
  backend b;
  job_graph g;
  g.id = job_id::random();
  g.name = "kept";
  g.vertices = {{"numbers", "sequence", {{"from", "1"}, {"to", "3"}}, 1},
                {"result", "collect", {}, 1}};
  g.edges = {{"numbers", "result", partitioning::forward}};
  {
    auto kv = b.open();
    REQUIRE(!claim_state_dir(*kv, "a", b.dir));
    REQUIRE_FALSE(job_graph_store{*kv}.put(g));
  }
  {
    auto kv = b.open();
    CHECK(claim_state_dir(*kv, "b", b.dir)
          == make_error(errc::storage_failure));
    CHECK(problem_of(claim_state_dir(*kv, "b", b.dir))
          == b.dir + " belongs to cluster 'a', not 'b' "
                 "(high-availability.cluster-id)");
    // The refusal changes nothing: the record and the jobs stay.
    CHECK(identity(*kv) == R"({"cluster_id":"a","format_version":1})");
    CHECK(problem_of(claim_state_dir(*kv, "", b.dir))
          == b.dir + " belongs to cluster 'a', not '' "
                 "(high-availability.cluster-id)");
  }
  auto kv = b.open();
  CHECK(!claim_state_dir(*kv, "a", b.dir));
  auto stored = job_graph_store{*kv}.load_all();
  REQUIRE(stored);
  CHECK(stored->problems.empty());
  REQUIRE(stored->graphs.size() == 1);
  CHECK(stored->graphs[0] == g);
}

TEST_CASE_TEMPLATE("claim_state_dir: the record is not seen by the job tables",
                   backend, BACKENDS) {
  backend b;
  auto kv = b.open();
  REQUIRE(!claim_state_dir(*kv, "default", b.dir));
  auto graphs = job_graph_store{*kv}.load_all();
  REQUIRE(graphs);
  CHECK(graphs->graphs.empty());
  CHECK(graphs->problems.empty());
  auto results = job_result_store{*kv}.load_all();
  REQUIRE(results);
  CHECK(results->entries.empty());
  CHECK(results->problems.empty());
}

TEST_CASE_TEMPLATE("claim_state_dir: cluster ids are compared as stored and "
                   "printed on one line",
                   backend, BACKENDS) {
  backend b;
  auto kv = b.open();
  REQUIRE(!claim_state_dir(*kv, "new\nline \"quoted\" \xc3\xa9", b.dir));
  CHECK(!claim_state_dir(*kv, "new\nline \"quoted\" \xc3\xa9", b.dir));
  CHECK(problem_of(claim_state_dir(*kv, "x", b.dir))
        == b.dir + " belongs to cluster 'new\\x0aline \"quoted\" \\xc3\\xa9', not "
               "'x' (high-availability.cluster-id)");
  // Invalid UTF-8 is stored replaced (JSON holds no raw bytes); the same id
  // still matches.
  backend b2;
  auto kv2 = b2.open();
  REQUIRE(!claim_state_dir(*kv2, "bad\xff", b2.dir));
  CHECK(!claim_state_dir(*kv2, "bad\xff", b2.dir));
}

TEST_CASE_TEMPLATE("claim_state_dir: an unreadable record is named, not "
                   "overwritten",
                   backend, BACKENDS) {
  backend b;
  auto kv = b.open();
  auto key = std::string{identity_key};
  auto prefix
    = b.dir + ": unreadable cluster id record blobs/meta/cluster-id: ";
  struct bad_record {
    std::string value;
    std::string problem;
  };
  for (auto& [value, problem] : {
         bad_record{"{not json", "invalid JSON at byte 3"},
         bad_record{"[1]", "record is not a JSON object"},
         bad_record{R"({"cluster_id":"a"})", "missing field 'format_version'"},
         bad_record{R"({"format_version":2,"cluster_id":"a"})",
                    "unknown format_version 2 (this weir reads 1)"},
         bad_record{R"({"format_version":1})", "missing field 'cluster_id'"},
         bad_record{R"({"format_version":1,"cluster_id":7})",
                    "field 'cluster_id' is not a string"},
       }) {
    CAPTURE(value);
    REQUIRE_FALSE(kv->put(identity_column, key, value, durability::synced));
    CHECK(problem_of(claim_state_dir(*kv, "a", b.dir)) == prefix + problem);
    CHECK(identity(*kv) == value);
  }
}

TEST_CASE("claim_state_dir: a store that cannot be written is reported") {
  // A store whose writes fail, as RocksDB's do on a full disk.
  class failing_store final : public kv_store {
  public:
    caf::expected<std::optional<std::string>> get(storage::column,
                                                  std::string_view) override {
      return std::optional<std::string>{};
    }
    caf::error put(storage::column c, std::string_view key, std::string_view,
                   durability) override {
      return make_error(errc::storage_failure,
                        "/d: put " + key_name(c, key)
                          + ": IO error: No space left on device");
    }
    caf::error remove(storage::column, std::string_view, durability) override {
      return caf::none;
    }
    caf::error write(const write_batch&, durability) override {
      return caf::none;
    }
    caf::error scan_prefix(storage::column, std::string_view,
                           const scan_callback&) override {
      return caf::none;
    }
  };
  failing_store kv;
  CHECK(problem_of(claim_state_dir(kv, "a", "/d"))
        == "/d: cannot record its cluster id: /d: put "
           "blobs/meta/cluster-id: IO error: No space left on device");
}
