// Keyed state: value and map state on both backends, canonical and native
// (RocksDB) snapshots, incremental checkpoints, and the count/sum
// operators' state across a snapshot and restore.
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "messages/key_groups.hpp"
#include "operators/registry.hpp"
#include "storage/state/heap_backend.hpp"
#include "storage/state/map_state.hpp"
#include "storage/state/rescale.hpp"
#include "storage/state/rocksdb_backend.hpp"
#include "storage/state/snapshot_format.hpp"
#include "storage/state/value_state.hpp"
#include "tests/rows.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace weir;
using namespace weir::state;

namespace {

namespace fs = std::filesystem;

/// Makes backends of one type; RocksDB ones get their own directories and
/// write native checkpoints under `checkpoints`.
struct backend_maker {
  std::string type;
  test::temp_dir dir;
  bool incremental = false;
  int made = 0;

  std::unique_ptr<keyed_backend> make() {
    if (type == "hashmap")
      return std::make_unique<heap_backend>();
    rocksdb_backend_options o;
    o.local_dir = dir.sub("local-" + std::to_string(made++));
    o.checkpoint_dir = dir.sub("checkpoints");
    o.incremental = incremental;
    o.owner = "agg-0";
    return std::make_unique<rocksdb_backend>(o);
  }
};

std::string take(keyed_backend& b, int64_t id,
                 snapshot_kind kind = snapshot_kind::checkpoint) {
  auto s = b.snapshot(id, kind);
  return s.finish ? s.finish() : s.bytes;
}

/// Runs a keyed sum on (key, value) rows keyed by "key", with its state in
/// `b`.
std::vector<record> run_sum(keyed_backend& b, const std::vector<record>& in,
                            bool finish) {
  auto rows = default_schema::keyed_numbers();
  ops::operator_context ctx;
  ctx.keyed_state = &b;
  ctx.input = &rows;
  ctx.output = &rows;
  ctx.key = {0};
  auto t = ops::registry::builtin().find("sum")->make_transform({});
  t->open(ctx);
  auto batch = test::to_rows(rows, in);
  row_batch out{rows};
  t->process(batch, out, false);
  if (finish)
    t->finish(out);
  return test::to_records(out, rows);
}

} // namespace

TEST_CASE("value and map state are scoped to the current key") {
  for (auto type : {"hashmap", "rocksdb"}) {
    CAPTURE(type);
    backend_maker m{type, {}};
    auto b = m.make();
    value_state<int64_t> count{*b, "count"};
    map_state<std::string, int64_t> seen{*b, "seen"};
    b->set_current_key("a");
    CHECK(!count.value());
    count.update(3);
    seen.put("x", 1);
    seen.put("y", 2);
    b->set_current_key("b");
    CHECK(!count.value());
    CHECK(seen.empty());
    count.modify([](int64_t& v, bool fresh) {
      CHECK(fresh);
      v = 7;
    });
    seen.put("x", 5);
    b->set_current_key("a");
    CHECK(count.value() == 3);
    CHECK(seen.get("y") == 2);
    CHECK(!seen.contains("z"));
    std::vector<std::pair<std::string, int64_t>> entries;
    seen.for_each([&](const std::string& k, int64_t v) {
      entries.emplace_back(k, v);
    });
    CHECK(entries == std::vector<std::pair<std::string, int64_t>>{{"x", 1},
                                                                  {"y", 2}});
    seen.remove("x");
    CHECK(!seen.contains("x"));
    count.clear();
    CHECK(!count.value());
    b->set_current_key("b");
    CHECK(count.value() == 7);
    CHECK(seen.get("x") == 5);
    seen.clear();
    CHECK(seen.empty());
  }
}

TEST_CASE("a snapshot restores on either backend, whichever took it") {
  for (auto from : {"hashmap", "rocksdb"}) {
    for (auto to : {"hashmap", "rocksdb"}) {
      for (auto kind : {snapshot_kind::checkpoint, snapshot_kind::savepoint}) {
        CAPTURE(from);
        CAPTURE(to);
        CAPTURE(static_cast<int>(kind));
        backend_maker source{from, {}};
        auto a = source.make();
        run_sum(*a,
                {record::integer("x", 1), record::integer("y", 2),
                 record::integer("x", 3)},
                false);
        auto bytes = take(*a, 1, kind);
        // Savepoints are canonical everywhere; RocksDB checkpoints native.
        CHECK(is_native(bytes)
              == (std::string{from} == "rocksdb"
                  && kind == snapshot_kind::checkpoint));
        backend_maker target{to, {}};
        auto b = target.make();
        b->restore(bytes);
        auto out = run_sum(*b, {record::integer("y", 10)}, true);
        REQUIRE(out.size() == 2);
        CHECK(out[0] == record::integer("x", 4));
        CHECK(out[1] == record::integer("y", 12));
        CHECK(b->unclaimed().empty());
      }
    }
  }
}

TEST_CASE("a RocksDB checkpoint outlives the database that took it") {
  backend_maker m{"rocksdb", {}};
  std::string bytes;
  {
    auto a = m.make();
    run_sum(*a, {record::integer("k", 41)}, false);
    bytes = take(*a, 1);
  } // its local directory is gone now
  CHECK(!fs::exists(m.dir.sub("local-0")));
  auto b = m.make();
  b->restore(bytes);
  auto out = run_sum(*b, {record::integer("k", 1)}, true);
  REQUIRE(out.size() == 1);
  CHECK(out[0] == record::integer("k", 42));
}

TEST_CASE("incremental RocksDB checkpoints share the files that did not "
          "change") {
  backend_maker m{"rocksdb", {}};
  m.incremental = true;
  auto b = m.make();
  value_state<int64_t> v{*b, "v"};
  auto put_keys = [&](int from, int to) {
    for (int i = from; i < to; ++i) {
      auto key = "key-" + std::to_string(i);
      b->set_current_key(key);
      v.update(i);
    }
  };
  auto sst_paths = [](const std::string& bytes) {
    std::set<std::string> paths;
    for (auto& [name, path] : decode_native(bytes).files)
      if (name.size() > 4 && name.substr(name.size() - 4) == ".sst")
        paths.insert(path);
    return paths;
  };
  put_keys(0, 1000);
  auto first = sst_paths(take(*b, 1));
  put_keys(1000, 2000);
  auto second = sst_paths(take(*b, 2));
  REQUIRE(first.size() == 1);
  REQUIRE(second.size() == 2);
  CHECK(second.count(*first.begin()) == 1); // uploaded once, shared
  CHECK(first.begin()->find("/shared/") != std::string::npos);
  // A full checkpoint shares nothing.
  auto full = sst_paths(take(*b, 3, snapshot_kind::full_checkpoint));
  CHECK(full.size() == 2);
  for (auto& p : full)
    CHECK(second.count(p) == 0);
  // The newest checkpoint alone restores all keys.
  backend_maker other{"hashmap", {}};
  auto h = other.make();
  h->restore(encode_native(decode_native(take(*b, 4))));
  value_state<int64_t> restored{*h, "v"};
  int64_t n = 0;
  restored.for_each([&](std::string_view, int64_t) { ++n; });
  CHECK(n == 2000);
}

TEST_CASE("keyed state the operator does not use is reported") {
  backend_maker m{"hashmap", {}};
  auto a = m.make();
  value_state<int64_t> other{*a, "other"};
  a->set_current_key("k");
  other.update(1);
  auto b = m.make();
  b->restore(take(*a, 1));
  run_sum(*b, {}, false);
  CHECK(b->unclaimed() == std::vector<std::string>{"other"});
}

TEST_CASE("truncated keyed state is an error") {
  for (auto type : {"hashmap", "rocksdb"}) {
    CAPTURE(type);
    backend_maker m{type, {}};
    auto a = m.make();
    run_sum(*a, {record::integer("x", 1)}, false);
    auto bytes = take(*a, 1, snapshot_kind::savepoint);
    bytes.resize(bytes.size() - 3);
    auto b = m.make();
    CHECK_THROWS_WITH_AS(b->restore(bytes),
                         "keyed state is truncated or malformed",
                         std::runtime_error);
  }
}

TEST_CASE("a missing RocksDB checkpoint file is an error naming it") {
  backend_maker m{"rocksdb", {}};
  auto a = m.make();
  run_sum(*a, {record::integer("x", 1)}, false);
  auto bytes = take(*a, 1);
  auto h = decode_native(bytes);
  REQUIRE(!h.files.empty());
  fs::remove(h.files.front().second);
  auto b = m.make();
  CHECK_THROWS_WITH_AS(b->restore(bytes),
                       ("cannot read '" + h.files.front().second
                        + "': No such file or directory")
                         .c_str(),
                       std::runtime_error);
}

TEST_CASE("a RocksDB snapshot naming a file outside its database is "
          "refused before anything is copied") {
  backend_maker m{"rocksdb", {}};
  auto source = m.dir.sub("source");
  std::ofstream{source} << "bytes";
  native_handle h;
  h.files = {{"../../escaped", source}};
  auto b = m.make(); // its database: <dir>/local-0/db
  CHECK_THROWS_WITH_AS(
    b->restore(encode_native(h)),
    "RocksDB snapshot file '../../escaped' is not a file name",
    std::runtime_error);
  CHECK_FALSE(fs::exists(m.dir.sub("escaped")));
}

TEST_CASE("a large heap snapshot is written while processing goes on "
          "(copy-on-write)") {
  backend_maker m{"hashmap", {}};
  auto b = m.make();
  value_state<int64_t> v{*b, "v"};
  auto key = [](int i) { return "key-" + std::to_string(i); };
  const int n = 70'000; // above the threshold for writing asynchronously
  // The backend keeps a view of the current key: the keys must live on.
  std::vector<std::string> keys;
  for (int i = 0; i < n; ++i)
    keys.push_back(key(i));
  for (int i = 0; i < n; ++i) {
    b->set_current_key(keys[static_cast<size_t>(i)]);
    v.update(i);
  }
  auto pending = b->snapshot(1, snapshot_kind::checkpoint);
  REQUIRE(pending.finish); // written on another thread
  // Meanwhile: a changed key, a new key, a removed key, a read-modify-write.
  b->set_current_key(keys[0]);
  v.update(-1);
  b->set_current_key("new");
  v.update(7);
  b->set_current_key(keys[1]);
  v.clear();
  b->set_current_key(keys[2]);
  v.modify([](int64_t& x, bool fresh) {
    CHECK_FALSE(fresh); // seen through the frozen table
    x += 100;
  });
  b->set_current_key(keys[1]);
  CHECK_FALSE(v.value());
  b->set_current_key(keys[3]);
  CHECK(v.value() == 3);
  auto bytes = pending.finish();
  b->snapshot_written(1);
  // The snapshot holds the state at the barrier...
  backend_maker other{"hashmap", {}};
  auto restored = other.make();
  restored->restore(bytes);
  value_state<int64_t> r{*restored, "v"};
  int64_t count = 0;
  bool exact = true;
  r.for_each([&](std::string_view k, int64_t x) {
    ++count;
    exact = exact && k == key(static_cast<int>(x));
  });
  CHECK(count == n);
  CHECK(exact);
  // ...and the live state has every later change, folded in.
  int64_t live = 0;
  v.for_each([&](std::string_view, int64_t) { ++live; });
  CHECK(live == n); // one removed, one added
  std::vector<std::pair<std::string, int64_t>> want{
    {key(0), -1}, {"new", 7}, {key(2), 102}, {key(4), 4}};
  for (auto& [k, x] : want) {
    b->set_current_key(k);
    CHECK(v.value() == x);
  }
  b->set_current_key(keys[1]);
  CHECK_FALSE(v.value());
  // Thawed: the next snapshot freezes again.
  CHECK(b->snapshot(2, snapshot_kind::checkpoint).finish);
}

TEST_CASE("key groups: Flink's default max parallelism and contiguous "
          "ranges") {
  CHECK(default_max_parallelism(1) == 128);
  CHECK(default_max_parallelism(85) == 128);
  CHECK(default_max_parallelism(86) == 256); // 129 rounds up
  CHECK(default_max_parallelism(1000) == 2048);
  CHECK(default_max_parallelism(32768) == 32768);
  for (int32_t max : {1, 128, 1000}) {
    for (int32_t p : {1, 2, 3, 7, max}) {
      CAPTURE(max);
      CAPTURE(p);
      int32_t next = 0;
      for (int32_t i = 0; i < p; ++i) {
        auto r = key_group_range_of(i, p, max);
        CHECK(r.first == next); // contiguous, in order, covering all
        for (auto g = r.first; g <= r.last; ++g)
          CHECK(subtask_of_key_group(g, p, max) == i);
        next = r.last + 1;
      }
      CHECK(next == max);
    }
  }
}

TEST_CASE("a snapshot split by key group, on either backend, loses and "
          "doubles nothing") {
  for (auto from : {"hashmap", "rocksdb"}) {
    CAPTURE(from);
    // Sums of 100 keys in two old subtasks (keys by parity).
    backend_maker source{from, {}};
    std::vector<std::string> old;
    for (int s = 0; s < 2; ++s) {
      auto b = source.make();
      std::vector<record> in;
      for (int k = s; k < 100; k += 2)
        in.push_back(record::integer("key-" + std::to_string(k), k));
      run_sum(*b, in, false);
      old.push_back(take(*b, 1));
    }
    // The group of a key is its number modulo 16; three new subtasks.
    auto group_of = [](std::string_view key) {
      return std::stoi(std::string{key.substr(4)}) % 16;
    };
    std::map<std::string, int64_t> all;
    for (int32_t i = 0; i < 3; ++i) {
      auto range = key_group_range_of(i, 3, 16);
      auto mine = select_key_groups(old, range, group_of);
      backend_maker target{"hashmap", {}};
      auto b = target.make();
      b->restore(mine);
      for (auto& r : run_sum(*b, {}, true)) {
        CHECK(range.contains(group_of(r.key)));
        CHECK(all.emplace(r.key, r.num).second); // once only
      }
    }
    REQUIRE(all.size() == 100);
    for (int k = 0; k < 100; ++k)
      CHECK(all.at("key-" + std::to_string(k)) == k);
  }
}

TEST_CASE("a keyed state's key is found in value, map and timer entries") {
  CHECK(key_of_entry("sum", state_type::value, "abc") == "abc");
  CHECK(key_of_entry("m", state_type::map, map_key_prefix("abc") + "user")
        == "abc");
  CHECK(key_of_entry(event_timers_state, state_type::map,
                     std::string(8, '\0') + "abc")
        == "abc");
  // A length of 9 with 2 bytes after it.
  CHECK_THROWS_WITH(key_of_entry("m", state_type::map,
                                 std::string{"\0\0\0\tab", 6}),
                    "keyed state 'm' has an entry whose key is malformed");
}

TEST_CASE("a timer under no key goes to every subtask of a split") {
  canonical_writer w{1};
  w.begin_state(processing_timers_state, state_type::map, 2);
  w.entry(std::string(8, '\1'), "");          // a window's wakeup: no key
  w.entry(std::string(8, '\1') + "k", "");    // key "k"
  auto bytes = w.take();
  auto group_of = [](std::string_view key) { return key == "k" ? 0 : 1; };
  auto entries = [](const std::string& canonical) {
    int64_t n = 0;
    read_canonical(
      canonical, [](const std::string&, state_type, int64_t) {},
      [&](std::string&&, std::string&&) { ++n; });
    return n;
  };
  CHECK(entries(select_key_groups({bytes}, {0, 0}, group_of)) == 2);
  CHECK(entries(select_key_groups({bytes}, {1, 1}, group_of)) == 1);
}

TEST_CASE("RocksDB keys carry their key group: a rescale reads its range "
          "alone, and a database from before still restores") {
  // The group of "key-N" is N modulo 16.
  auto group_of = [](std::string_view key) {
    return std::stoi(std::string{key.substr(4)}) % 16;
  };
  test::temp_dir dir;
  int made = 0;
  auto make = [&](bool grouped) {
    rocksdb_backend_options o;
    o.local_dir = dir.sub("local-" + std::to_string(made++));
    o.checkpoint_dir = dir.sub("checkpoints");
    o.owner = "agg-0";
    if (grouped) {
      o.group_of = group_of;
      o.max_parallelism = 16;
    }
    return std::make_unique<rocksdb_backend>(o);
  };
  auto keys_of = [](const std::string& canonical) {
    std::set<std::string> keys;
    read_canonical(
      canonical, [](const std::string&, state_type, int64_t) {},
      [&](std::string&& k, std::string&&) { keys.insert(k); });
    return keys;
  };
  auto sums = [](keyed_backend& b) {
    std::map<std::string, int64_t> out;
    for (auto& r : run_sum(b, {}, true))
      out[r.key] = r.num;
    return out;
  };
  std::vector<record> in;
  std::map<std::string, int64_t> expected;
  for (int k = 0; k < 40; ++k) {
    in.push_back(record::integer("key-" + std::to_string(k), k));
    expected["key-" + std::to_string(k)] = k;
  }
  auto b = make(true);
  run_sum(*b, in, false);
  auto native = take(*b, 1);
  REQUIRE(is_native(native));
  // Groups 4..7: keys 4-7, 20-23 and 36-39, read without their prefix.
  key_group_range range{4, 7};
  auto part = keys_of(native_range_to_canonical(native, range, 16));
  CHECK(part.size() == 12);
  for (auto& k : part)
    CHECK(range.contains(group_of(k)));
  // Groups of another count: everything is read (and filtered by key).
  CHECK(keys_of(native_range_to_canonical(native, range, 32)).size() == 40);
  // The canonical form restores on the heap; the native one on RocksDB,
  // which goes on with grouped keys.
  heap_backend heap;
  heap.restore(native_to_canonical(native));
  CHECK(sums(heap) == expected);
  auto again = make(true);
  again->restore(native);
  CHECK(sums(*again) == expected);
  // A database whose keys carry no groups (from before them) restores
  // into a backend that groups, and keeps its keys as they are.
  auto legacy = make(false);
  run_sum(*legacy, in, false);
  auto old_native = take(*legacy, 2);
  CHECK(keys_of(native_range_to_canonical(old_native, range, 16)).size()
        == 40);
  auto later = make(true);
  later->restore(old_native);
  CHECK(sums(*later) == expected);
  // A savepoint of a grouped database is canonical: keys without groups.
  CHECK(keys_of(take(*b, 3, snapshot_kind::savepoint)).size() == 40);
}
