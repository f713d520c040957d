#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "messages/binary_codec.hpp"
#include "messages/errors.hpp"
#include "storage/state/snapshot_format.hpp"
#include "storage/checkpoint_store.hpp"
#include "storage/memory_store.hpp"
#include "storage/rocksdb_store.hpp"
#include "temp_dir.hpp"

using namespace weir;
using namespace weir::storage;
using weir::storage::column;
using weir::test::temp_dir;

namespace {

checkpoint_snapshot checkpoint(int64_t id) {
  checkpoint_snapshot cp;
  cp.id = id;
  cp.state.vertices["numbers"] = {std::string("\x01\x00\x02", 3), "x"};
  cp.state.vertices["sums"] = {"abc", ""};
  return cp;
}

void overwrite(const std::string& path, const std::string& bytes) {
  std::ofstream out{path, std::ios::binary | std::ios::trunc};
  out << bytes;
}

} // namespace

TEST_CASE("checkpoint data round-trips and malformed data is refused") {
  auto cp = checkpoint(7);
  auto back = decode_checkpoint(encode_checkpoint(cp), "f");
  REQUIRE(back);
  CHECK(*back == cp);
  auto bytes = encode_checkpoint(cp);
  auto cut = decode_checkpoint(bytes.substr(0, bytes.size() - 1), "f");
  REQUIRE_FALSE(cut);
  CHECK(describe(cut.error()) == "f: not a weir checkpoint or truncated");
}

TEST_CASE("a retained checkpoint reads as a savepoint (weir run -r)") {
  temp_dir dir;
  memory_store mem;
  checkpoint_store store{mem, dir.path()};
  auto job = job_id::random();
  auto path = store.put(job, checkpoint(4), 1);
  REQUIRE(path);
  auto sp = read_savepoint(*path);
  REQUIRE(sp);
  CHECK(sp->vertices == checkpoint(4).state.vertices);
  overwrite(*path, "WEIRCHK2garbage");
  auto bad = read_savepoint(*path);
  REQUIRE_FALSE(bad);
  CHECK(describe(bad.error()) == *path + ": not a weir checkpoint or truncated");
}

TEST_CASE("savepoints keep each vertex's max parallelism; older ones have "
          "none") {
  temp_dir dir;
  auto path = dir.sub("sp");
  savepoint_data sp;
  sp.vertices["sums"] = {"a", "b"};
  sp.max_parallelism["sums"] = 256;
  REQUIRE_FALSE(write_savepoint(path, sp));
  auto back = read_savepoint(path);
  REQUIRE(back);
  CHECK(back->vertices == sp.vertices);
  CHECK(back->max_parallelism == sp.max_parallelism);
  // Format 1, before key groups: vertex "sums", two subtasks.
  std::string legacy{"WEIRSVP1"};
  append_int64(legacy, 1);
  append_text(legacy, "sums");
  append_int64(legacy, 2);
  append_text(legacy, "a");
  append_text(legacy, "b");
  overwrite(path, legacy);
  back = read_savepoint(path);
  REQUIRE(back);
  CHECK(back->vertices == sp.vertices);
  CHECK(back->max_parallelism.empty());
}

TEST_CASE("a savepoint or checkpoint of another format names the formats") {
  temp_dir dir;
  auto path = dir.sub("sp");
  overwrite(path, "WEIRSVP3whatever a newer weir wrote");
  auto newer = read_savepoint(path);
  REQUIRE_FALSE(newer);
  CHECK(describe(newer.error())
        == path + ": a weir savepoint of format 3, newer than this weir reads "
                  "(2): read it with a newer weir");
  overwrite(path, "WEIRCHK1an old checkpoint");
  auto older = read_savepoint(path);
  REQUIRE_FALSE(older);
  CHECK(describe(older.error())
        == path + ": a weir checkpoint of format 1, older than this weir "
                  "reads (3)");
  overwrite(path, "PK\x03\x04 a zip file");
  auto other = read_savepoint(path);
  REQUIRE_FALSE(other);
  CHECK(describe(other.error()) == path + ": not a weir savepoint or truncated");
}

TEST_CASE("the newest retained checkpoint is restored; a bad one falls back") {
  temp_dir dir;
  auto db = open_rocksdb_store(dir.sub("state"));
  REQUIRE(db);
  memory_store mem;
  for (kv_store* kv : {static_cast<kv_store*>(db->get()),
                       static_cast<kv_store*>(&mem)}) {
    checkpoint_store store{*kv, dir.sub(kv == &mem ? "mem" : "rocks")};
    auto job = job_id::random();
    std::vector<std::string> problems;
    auto none = store.latest(job, problems);
    REQUIRE(none);
    CHECK(none->id == 0);
    for (int64_t id = 1; id <= 3; ++id)
      REQUIRE(store.put(job, checkpoint(id), 2));
    CHECK_FALSE(std::filesystem::exists(store.file_of(job, 1))); // dropped
    auto newest = store.latest(job, problems);
    REQUIRE(newest);
    CHECK(*newest == checkpoint(3));
    CHECK(problems.empty());
    overwrite(store.file_of(job, 3), "garbage");
    auto fallback = store.latest(job, problems);
    REQUIRE(fallback);
    CHECK(fallback->id == 2);
    REQUIRE(problems.size() == 1);
    CHECK(problems[0] == "checkpoint 3 of job " + job.to_string() + ": "
                           + store.file_of(job, 3)
                           + ": not a weir checkpoint or truncated");
    std::filesystem::remove(store.file_of(job, 2));
    problems.clear();
    auto nothing = store.latest(job, problems);
    REQUIRE(nothing);
    CHECK(nothing->id == 0);
    CHECK(problems.size() == 2);
  }
}

namespace {

/// A checkpoint whose keyed state is a RocksDB snapshot of `files`.
checkpoint_snapshot native_checkpoint(int64_t id,
                                      const std::vector<std::string>& files) {
  state::native_handle h;
  for (auto& f : files) {
    h.files.emplace_back(std::filesystem::path{f}.filename().string(), f);
    overwrite(f, "sst");
  }
  checkpoint_snapshot cp;
  cp.id = id;
  cp.state.vertices["counts"] = {
    state::encode_vertex_snapshot({{}, state::encode_native(h)})};
  return cp;
}

} // namespace

TEST_CASE("shared state files go with the last checkpoint that refers to "
          "them; a missing one falls back") {
  temp_dir dir;
  memory_store mem;
  checkpoint_store store{mem, dir.path()};
  auto job = job_id::random();
  auto shared = dir.sub(job.to_string() + "/shared");
  std::filesystem::create_directories(shared);
  auto a = shared + "/a.sst", b = shared + "/b.sst", c = shared + "/c.sst",
       d = shared + "/d.sst";
  REQUIRE(store.put(job, native_checkpoint(1, {a, b}), 2));
  REQUIRE(store.put(job, native_checkpoint(2, {b, c}), 2));
  CHECK(std::filesystem::exists(a));
  // Checkpoint 1 is dropped: a goes, b stays (checkpoint 2 has it).
  REQUIRE(store.put(job, native_checkpoint(3, {c, d}), 2));
  CHECK_FALSE(std::filesystem::exists(a));
  CHECK(std::filesystem::exists(b));
  CHECK(std::filesystem::exists(c));
  std::filesystem::remove(d);
  std::vector<std::string> problems;
  auto cp = store.latest(job, problems);
  REQUIRE(cp);
  CHECK(cp->id == 2);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0] == "checkpoint 3 of job " + job.to_string()
                         + ": its state file '" + d + "' is missing");
}

TEST_CASE("a dropped checkpoint deletes only files inside its job's "
          "directory, whatever its state claims") {
  temp_dir dir;
  memory_store mem;
  checkpoint_store store{mem, dir.sub("checkpoints")};
  auto job = job_id::random();
  auto own = dir.sub("checkpoints/" + job.to_string() + "/shared");
  std::filesystem::create_directories(own);
  auto inside = own + "/a.sst";
  // What a TaskExecutor could name in its acknowledgement.
  auto outside = dir.sub("precious.sst");
  auto sneaky = own + "/../../../precious2.sst";
  REQUIRE(store.put(job, native_checkpoint(1, {inside, outside, sneaky}), 1));
  REQUIRE(store.put(job, native_checkpoint(2, {}), 1)); // drops checkpoint 1
  CHECK_FALSE(std::filesystem::exists(inside));
  CHECK(std::filesystem::exists(outside));
  CHECK(std::filesystem::exists(dir.sub("precious2.sst")));
}

TEST_CASE("a checkpoint still being written when a newer one completes "
          "keeps its directory until the next one") {
  temp_dir dir;
  memory_store mem;
  checkpoint_store store{mem, dir.path()};
  auto job = job_id::random();
  auto job_dir = dir.sub(job.to_string());
  namespace fs = std::filesystem;
  REQUIRE(store.put(job, checkpoint(2), 1));
  // Checkpoint 3 is being written (periodic) when the savepoint 4 completes.
  fs::create_directories(job_dir + "/chk-3.d");
  fs::create_directories(job_dir + "/chk-2.d");
  fs::create_directories(job_dir + "/chk-1.d"); // never completed, older
  REQUIRE(store.put(job, checkpoint(4), 1));
  CHECK(fs::exists(job_dir + "/chk-3.d"));
  CHECK_FALSE(fs::exists(job_dir + "/chk-2.d")); // dropped
  CHECK_FALSE(fs::exists(job_dir + "/chk-1.d"));
  REQUIRE(store.put(job, checkpoint(5), 1));
  CHECK_FALSE(fs::exists(job_dir + "/chk-3.d"));
}
