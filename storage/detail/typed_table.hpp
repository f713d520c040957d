#pragma once

#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "messages/errors.hpp"
#include "storage/kv_store.hpp"

namespace weir::storage::detail {

/// Reads and decodes the record under `key` of `col`; nothing when absent.
/// `decode(key, value)` returns caf::expected<T>.
template <class T, class Decode>
[[nodiscard]] caf::expected<std::optional<T>> get_decoded(kv_store& kv, column col,
                                            const std::string& key,
                                            Decode decode) {
  auto value = kv.get(col, key);
  if (!value)
    return std::move(value.error());
  if (!*value)
    return std::optional<T>{};
  auto decoded = decode(key, **value);
  if (!decoded)
    return std::move(decoded.error());
  return std::optional<T>{std::move(*decoded)};
}

/// Decodes every record of `col` in key order: readable ones go to `items`,
/// one line per unreadable one (a value that cannot be read or decoded) to
/// `problems`, and its key to `bad_keys` if given. Fails only when the
/// store itself fails.
template <class T, class Decode>
[[nodiscard]] caf::error scan_decoded(kv_store& kv, column col, Decode decode,
                        std::vector<T>& items, std::vector<std::string>& problems,
                        std::vector<std::string>* bad_keys = nullptr) {
  auto bad = [&](std::string_view key, std::string line) {
    problems.push_back(std::move(line));
    if (bad_keys != nullptr)
      bad_keys->emplace_back(key);
  };
  return kv.scan_readable(
    col,
    [&](auto key, auto value) {
      if (auto decoded = decode(key, value))
        items.push_back(std::move(*decoded));
      else
        bad(key, describe(decoded.error()));
    },
    [&](std::string_view key, const caf::error& why) {
      bad(key, to_string(col) + "/" + std::string{key} + ": "
                 + describe(why));
    });
}

} // namespace weir::storage::detail
