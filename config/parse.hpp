#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "config/config_key.hpp"

namespace weir::detail {

/// Reads a configuration value as users write it; nothing when it is not
/// of type `T` ("10 s" for a duration, "512m" for a memory size).
template <class T>
std::optional<T> parse_value(const std::string& text);

/// "" when `value` is a valid value of `k` (its type, its range, its
/// choices), else what was expected ("expected an integer", "expected a
/// value in [1, 32768]").
std::string type_problem(const key_info& k, const std::string& value);

/// Whether `a` and `b` are the same value of `k` ("2s" and "2000 ms").
bool same_value(const key_info& k, const std::string& a, const std::string& b);

/// `s` without leading and trailing blanks.
std::string trim(const std::string& s);

} // namespace weir::detail
