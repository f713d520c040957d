#pragma once

#include <optional>
#include <string>

#include "storage/state/heap_backend.hpp"

namespace weir::state {

/// One value of type T per key (Flink's ValueState), for the backend's
/// current key. On the heap backend values stay objects in a hash table;
/// on RocksDB they are encoded with codec<T>.
template <class T>
class value_state {
public:
  value_state(keyed_backend& b, const std::string& name) : backend_(&b) {
    if (auto* h = b.heap())
      table_ = &h->value_table<T>(name);
    else
      column_ = &b.column(name, state_type::value);
  }

  /// The current key's value, if it has one.
  std::optional<T> value() const {
    auto key = backend_->current_key();
    if (table_) {
      auto i = table_->map.find(lookup(key));
      if (i != table_->map.end())
        return i->second;
      if (auto* v = table_->from_frozen(key))
        return *v; // a snapshot is being written
      return std::nullopt;
    }
    std::string bytes;
    if (!column_->get(key, bytes))
      return std::nullopt;
    return codec<T>::decode(bytes);
  }

  void update(const T& v) {
    if (table_)
      table_->map.insert_or_assign(std::string{backend_->current_key()}, v);
    else
      put_bytes(backend_->current_key(), v);
  }

  void clear() {
    if (table_) {
      auto key = backend_->current_key();
      if (auto i = table_->map.find(lookup(key)); i != table_->map.end())
        table_->map.erase(i);
      if (table_->frozen)
        table_->removed.emplace(key);
    } else {
      column_->remove(backend_->current_key());
    }
  }

  /// Read-modify-write of the current key's value: `f(T& v, bool fresh)`,
  /// where `fresh` means the key had no value (v is then T{}). One hash
  /// lookup on the heap.
  template <class F>
  void modify(F&& f) {
    auto key = backend_->current_key();
    if (table_) {
      auto [i, fresh] = table_->map.try_emplace(lookup(key));
      if (fresh && table_->frozen) // copy-on-write
        if (auto* v = table_->from_frozen(key)) {
          i->second = *v;
          fresh = false;
        }
      f(i->second, fresh);
      return;
    }
    std::string bytes;
    bool fresh = !column_->get(key, bytes);
    T v = fresh ? T{} : codec<T>::decode(bytes);
    f(v, fresh);
    put_bytes(key, v);
  }

  /// Calls `f(key, value)` for every key that has a value (heap: in no
  /// particular order; RocksDB: by key group, then in byte order of the
  /// keys).
  template <class F>
  void for_each(F&& f) const {
    if (table_) {
      table_->visit(f);
      return;
    }
    column_->scan({}, [&](std::string_view k, std::string_view v) {
      f(k, codec<T>::decode(v));
    });
  }

  /// Removes every key's value.
  void clear_all() {
    if (table_) {
      table_->map.clear();
      table_->removed.clear();
      if (table_->frozen)
        table_->frozen_cleared = true;
    } else
      column_->remove_prefix({});
  }

  /// Capacity hint (heap only).
  void reserve(size_t n) {
    if (table_)
      table_->map.reserve(n);
  }

private:
  void put_bytes(std::string_view key, const T& v) {
    buffer_.clear();
    codec<T>::append(buffer_, v);
    column_->put(key, buffer_);
  }

  /// Debian's absl has its own string_view, which its hash tables look up
  /// by.
  static absl::string_view lookup(std::string_view k) {
    return absl::string_view{k.data(), k.size()};
  }

  keyed_backend* backend_;
  heap_value_table<T>* table_ = nullptr;
  kv_column* column_ = nullptr;
  std::string buffer_; ///< reused for encoding (RocksDB)
};

} // namespace weir::state
