#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace weir {

/// The type of a configuration value as users write it.
enum class config_type {
  integer,  ///< a whole number
  number,   ///< a decimal number
  boolean,  ///< true or false
  text,     ///< any string
  duration, ///< "500 ms", "10 s", "1 min"; a bare number means milliseconds
  memory,   ///< "512m", "1g", "256 mb"; a bare number means bytes
};

std::string to_string(config_type t);

/// A memory size ("512m", "1g"), in whole MiB.
struct memory_size {
  int64_t mb = 0;
};

/// Where a key may be set: cluster-wide only (file, -D), or also in a
/// job's own settings (its spec's `config`).
enum class config_scope { cluster, job };

/// The C++ type of a value of each config_type.
template <class T>
constexpr config_type config_type_of = T::unsupported_configuration_type;
template <>
inline constexpr config_type config_type_of<int64_t> = config_type::integer;
template <>
inline constexpr config_type config_type_of<double> = config_type::number;
template <>
inline constexpr config_type config_type_of<bool> = config_type::boolean;
template <>
inline constexpr config_type config_type_of<std::string> = config_type::text;
template <>
inline constexpr config_type config_type_of<std::chrono::milliseconds>
  = config_type::duration;
template <>
inline constexpr config_type config_type_of<memory_size> = config_type::memory;

/// The smallest and the largest valid value of a numeric key, written as
/// users write values ("1", "1 ms", "8760 h", "16384g"); both empty for
/// text and boolean keys.
struct value_range {
  std::string_view min;
  std::string_view max;
};

/// A key's description without its C++ type: what the parser, the docs
/// check and `-D` validation need.
struct key_info {
  std::string_view name;
  config_type type;
  std::string_view default_value; ///< as users write it; "" = unset
  std::string_view meaning;
  value_range range;
  config_scope scope;
  std::string_view choices; ///< "a|b|c": the allowed values of a text key
};

/// One configuration key: Flink's name, its value type `T`, its default
/// (written as a user would write it), meaning and, for numbers, the range
/// of valid values. Read with `configuration::get`. config/keys.hpp holds
/// them all.
template <class T>
struct config_key {
  std::string_view name;
  std::string_view default_value; ///< "" = unset (get returns T{})
  std::string_view meaning;
  value_range range = {}; ///< required for numeric keys (the config test)
  config_scope scope = config_scope::cluster;
  std::string_view choices = {};

  using value_type = T;
  static constexpr config_type type = config_type_of<T>;

  constexpr key_info info() const {
    return {name, type, default_value, meaning, range, scope, choices};
  }
};

/// Every key of config/keys.hpp, in docs/configuration.md's order.
const std::vector<key_info>& config_keys();

/// The key named `name`, or nullptr.
const key_info* find_key(std::string_view name);

} // namespace weir
