#pragma once

#include <optional>
#include <string>

#include "storage/state/codec.hpp"
#include "storage/state/keyed_backend.hpp"

namespace weir::state {

/// A map from user keys UK to values UV per key (Flink's MapState), for the
/// backend's current key. Entries are stored as bytes on every backend
/// (store key: the key's prefix, then the encoded user key), so iteration
/// is in byte order of the encoded user keys.
template <class UK, class UV>
class map_state {
public:
  map_state(keyed_backend& b, const std::string& name)
    : backend_(&b), column_(&b.column(name, state_type::map)) {
  }

  std::optional<UV> get(const UK& uk) const {
    std::string bytes;
    if (!column_->get(store_key(uk), bytes))
      return std::nullopt;
    return codec<UV>::decode(bytes);
  }

  bool contains(const UK& uk) const {
    std::string bytes;
    return column_->get(store_key(uk), bytes);
  }

  void put(const UK& uk, const UV& v) {
    column_->put(store_key(uk), encode(v));
  }

  void remove(const UK& uk) { column_->remove(store_key(uk)); }

  /// Calls `f(user key, value)` for each entry of the current key.
  template <class F>
  void for_each(F&& f) const {
    auto prefix = map_key_prefix(backend_->current_key());
    column_->scan(prefix, [&](std::string_view k, std::string_view v) {
      f(codec<UK>::decode(k.substr(prefix.size())), codec<UV>::decode(v));
    });
  }

  bool empty() const {
    bool any = false;
    column_->scan(map_key_prefix(backend_->current_key()),
                  [&](std::string_view, std::string_view) { any = true; });
    return !any;
  }

  /// Removes the current key's entries.
  void clear() { column_->remove_prefix(map_key_prefix(backend_->current_key())); }

private:
  std::string store_key(const UK& uk) const {
    auto key = map_key_prefix(backend_->current_key());
    codec<UK>::append(key, uk);
    return key;
  }

  keyed_backend* backend_;
  kv_column* column_;
};

} // namespace weir::state
