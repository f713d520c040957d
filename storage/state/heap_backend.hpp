#pragma once

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "storage/state/codec.hpp"
#include "storage/state/keyed_backend.hpp"
#include "storage/state/snapshot_format.hpp"

namespace weir::state {

/// A value state's table on the heap backend, typed: values stay objects
/// and are encoded only in snapshots (as Flink's HashMapStateBackend).
class heap_table_base {
public:
  virtual ~heap_table_base() = default;
  virtual int64_t size() const = 0;
  /// Writes every entry (canonical form).
  virtual void dump(canonical_writer& w) const = 0;
  virtual void load(std::string&& key, std::string_view value) = 0;
};

template <class T>
class heap_value_table : public heap_table_base {
public:
  /// An open-addressing table: no node per key, which matters at tens of
  /// millions of updates per second.
  absl::flat_hash_map<std::string, T> map;

  int64_t size() const override { return static_cast<int64_t>(map.size()); }
  void dump(canonical_writer& w) const override {
    std::string bytes;
    for (auto& [k, v] : map) {
      bytes.clear();
      codec<T>::append(bytes, v);
      w.entry(k, bytes);
    }
  }
  void load(std::string&& key, std::string_view value) override {
    map.insert_or_assign(std::move(key), codec<T>::decode(value));
  }
};

/// Keyed state on the heap (state.backend.type: hashmap): value states in
/// typed hash tables, map states in ordered byte maps. Snapshots are
/// canonical; serializing them is the only work on the processing thread.
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
  std::vector<std::string> unclaimed() const override;
  std::string name() const override { return "hashmap"; }

private:
  class ordered_column;
  struct stashed {
    state_type type;
    std::vector<std::pair<std::string, std::string>> entries;
  };

  void claim(const std::string& name, state_type type, heap_table_base& t);

  std::map<std::string, std::unique_ptr<heap_table_base>> tables_;
  std::map<std::string, std::unique_ptr<ordered_column>> columns_;
  /// Restored states not registered yet.
  std::map<std::string, stashed> stash_;
};

} // namespace weir::state
