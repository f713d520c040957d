#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include "storage/state/codec.hpp"
#include "storage/state/keyed_backend.hpp"
#include "storage/state/snapshot_format.hpp"

namespace weir::state {

/// What an asynchronous snapshot writes on another thread: a table's
/// entries as they were at the barrier (read-only while it is written).
class frozen_table {
public:
  virtual ~frozen_table() = default;
  virtual int64_t size() const = 0;
  virtual void dump(canonical_writer& w) const = 0;
};

/// A value state's table on the heap backend, typed: values stay objects
/// and are encoded only in snapshots (as Flink's HashMapStateBackend).
class heap_table_base {
public:
  virtual ~heap_table_base() = default;
  /// Entries visible now.
  virtual int64_t size() const = 0;
  /// Writes every visible entry (canonical form).
  virtual void dump(canonical_writer& w) const = 0;
  virtual void load(std::string&& key, std::string_view value) = 0;
  /// Copy-on-write for an asynchronous snapshot: the entries are frozen
  /// and later changes go to a layer over them. nullptr while an earlier
  /// snapshot is still being written.
  virtual std::shared_ptr<const frozen_table> freeze() = 0;
  /// The frozen entries were written: the layer is folded into them (its
  /// cost is the number of changes since the freeze).
  virtual void thaw() = 0;
  /// Whether an earlier snapshot's freeze is still in place.
  virtual bool freeze_pending() const = 0;
};

template <class T>
class heap_value_table : public heap_table_base {
public:
  /// An open-addressing table: no node per key, which matters at tens of
  /// millions of updates per second.
  using map_type = absl::flat_hash_map<std::string, T>;

  /// The live entries; while a snapshot is written, only those changed
  /// since it froze the rest.
  map_type map;
  /// The entries a snapshot is writing (nullptr: none).
  std::shared_ptr<map_type> frozen;
  /// Keys removed since the freeze, and whether all of them were.
  absl::flat_hash_set<std::string> removed;
  bool frozen_cleared = false;

  /// The frozen value of `key` if it is still visible (not in `map`).
  const T* from_frozen(std::string_view key) const {
    if (!frozen || frozen_cleared)
      return nullptr;
    absl::string_view k{key.data(), key.size()};
    if (removed.count(k) > 0)
      return nullptr;
    auto i = frozen->find(k);
    return i == frozen->end() ? nullptr : &i->second;
  }

  /// Calls `f(key, value)` for every visible entry.
  template <class F>
  void visit(F&& f) const {
    for (auto& [k, v] : map)
      f(std::string_view{k}, v);
    if (!frozen || frozen_cleared)
      return;
    for (auto& [k, v] : *frozen)
      if (map.count(k) == 0 && removed.count(k) == 0)
        f(std::string_view{k}, v);
  }

  int64_t size() const override {
    if (!frozen)
      return static_cast<int64_t>(map.size());
    int64_t n = 0;
    visit([&](std::string_view, const T&) { ++n; });
    return n;
  }

  void dump(canonical_writer& w) const override {
    std::string bytes;
    visit([&](std::string_view k, const T& v) {
      bytes.clear();
      codec<T>::append(bytes, v);
      w.entry(k, bytes);
    });
  }

  void load(std::string&& key, std::string_view value) override {
    map.insert_or_assign(std::move(key), codec<T>::decode(value));
  }

  std::shared_ptr<const frozen_table> freeze() override {
    if (frozen)
      return nullptr;
    frozen = std::make_shared<map_type>(std::move(map));
    map = map_type{};
    return std::make_shared<view>(frozen);
  }

  bool freeze_pending() const override { return frozen != nullptr; }

  void thaw() override {
    // The writer dropped its view before the snapshot was acknowledged; if
    // not, the layer stays (a later snapshot writes synchronously).
    if (!frozen || frozen.use_count() != 1)
      return;
    if (!frozen_cleared) {
      auto merged = std::move(*frozen);
      for (auto& k : removed)
        merged.erase(k);
      for (auto& [k, v] : map)
        merged.insert_or_assign(k, std::move(v));
      map = std::move(merged);
    }
    frozen.reset();
    removed.clear();
    frozen_cleared = false;
  }

private:
  struct view : frozen_table {
    explicit view(std::shared_ptr<map_type> m) : entries(std::move(m)) {}
    int64_t size() const override {
      return static_cast<int64_t>(entries->size());
    }
    void dump(canonical_writer& w) const override {
      std::string bytes;
      for (auto& [k, v] : *entries) {
        bytes.clear();
        codec<T>::append(bytes, v);
        w.entry(k, bytes);
      }
    }
    std::shared_ptr<map_type> entries;
  };
};

/// Keyed state on the heap (state.backend.type: hashmap): value states in
/// typed hash tables, map states in ordered byte maps. Snapshots are
/// canonical. Large value states are snapshotted asynchronously: the
/// barrier freezes their tables (copy-on-write), another thread serializes
/// them while processing goes on, and snapshot_written() folds the changes
/// made meanwhile back in.
class heap_backend : public keyed_backend {
public:
  heap_backend();
  ~heap_backend() override;

  heap_backend* heap() override { return this; }

  /// The table of value state `name` (created on first use, filled from a
  /// restored snapshot); throws when `name` has another type.
  template <class T>
  heap_value_table<T>& value_table(const std::string& name) {
    auto& slot = tables_[name];
    if (!slot) {
      slot = std::make_unique<heap_value_table<T>>();
      claim(name, state_type::value, *slot);
    }
    auto* t = dynamic_cast<heap_value_table<T>*>(slot.get());
    if (t == nullptr)
      throw std::runtime_error("state '" + name
                               + "' is used with two value types");
    return *t;
  }

  kv_column& column(const std::string& name, state_type type) override;
  void restore(const std::string& bytes) override;
  pending_snapshot snapshot(int64_t id, snapshot_kind kind) override;
  void snapshot_written(int64_t id) override;
  std::vector<std::string> unclaimed() const override;
  std::string name() const override { return "hashmap"; }

private:
  class ordered_column;
  struct stashed {
    state_type type;
    std::vector<std::pair<std::string, std::string>> entries;
  };

  void claim(const std::string& name, state_type type, heap_table_base& t);
  std::map<std::string, std::map<std::string, std::string, std::less<>>>
  copy_columns() const;

  std::map<std::string, std::unique_ptr<heap_table_base>> tables_;
  std::map<std::string, std::unique_ptr<ordered_column>> columns_;
  /// Restored states not registered yet.
  std::map<std::string, stashed> stash_;
};

} // namespace weir::state
