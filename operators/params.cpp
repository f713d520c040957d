#include "operators/params.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>

#include <fmt/format.h>

namespace weir::ops {

namespace {

/// "" when `value` fits `kind`, else the problem.
std::string check_value(const std::string& value, param_kind kind) {
  switch (kind) {
    case param_kind::text:
      return {};
    case param_kind::number:
      if (!parse_double(value))
        return fmt::format("'{}' is not a number", value);
      return {};
    case param_kind::boolean:
      if (!parse_bool(value))
        return fmt::format("'{}' is neither true nor false", value);
      return {};
    default:
      break;
  }
  auto n = parse_int64(value);
  if (!n)
    return fmt::format("'{}' is not an integer", value);
  switch (kind) {
    case param_kind::positive:
      if (*n <= 0)
        return fmt::format("'{}' is not a positive integer", value);
      break;
    case param_kind::non_negative:
      if (*n < 0)
        return fmt::format("'{}' is not a non-negative integer", value);
      break;
    case param_kind::limit:
      if (*n < -1)
        return fmt::format("'{}' is neither a non-negative integer nor -1",
                           value);
      break;
    default:
      break;
  }
  return {};
}

std::string known_names(const std::vector<param_spec>& specs) {
  std::vector<std::string> names;
  names.reserve(specs.size());
  for (const auto& s : specs)
    names.push_back(s.name);
  return join_sorted(std::move(names));
}

} // namespace

std::string join_sorted(std::vector<std::string> names) {
  if (names.empty())
    return "none";
  std::sort(names.begin(), names.end());
  std::string out = names.front();
  for (size_t i = 1; i < names.size(); ++i) {
    out += ", ";
    out += names[i];
  }
  return out;
}

std::optional<int64_t> parse_int64(std::string_view text) {
  int64_t n = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, n);
  if (text.empty() || ec != std::errc{} || ptr != end)
    return std::nullopt;
  return n;
}

std::optional<double> parse_double(std::string_view text) {
  double x = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, x);
  if (text.empty() || ec != std::errc{} || ptr != end || !std::isfinite(x))
    return std::nullopt;
  return x;
}

std::optional<bool> parse_bool(std::string_view text) {
  if (text == "true")
    return true;
  if (text == "false")
    return false;
  return std::nullopt;
}

std::string check_params(const std::string& op, const params& p,
                         const std::vector<param_spec>& specs) {
  auto find = [&](const std::string& name) {
    return std::find_if(specs.begin(), specs.end(),
                        [&](const param_spec& s) { return s.name == name; });
  };
  for (const auto& [name, value] : p)
    if (find(name) == specs.end())
      return fmt::format(
        "parameter '{}': unknown parameter of operator '{}' (known: {})", name,
        op, known_names(specs));
  for (const auto& s : specs)
    if (s.required && p.count(s.name) == 0)
      return fmt::format("parameter '{}': missing", s.name);
  for (const auto& s : specs) {
    auto i = p.find(s.name);
    if (i == p.end())
      continue;
    if (auto problem = check_value(i->second, s.kind); !problem.empty())
      return fmt::format("parameter '{}': {}", s.name, problem);
  }
  return {};
}

void throw_if(const std::string& problem) {
  if (!problem.empty())
    throw operator_error(problem);
}

void throw_overflow(const std::string& op, std::string_view key,
                    int64_t value) {
  constexpr size_t shown = 64;
  if (key.empty())
    throw operator_error(
      fmt::format("{}: int64 overflow at value {}", op, value));
  throw operator_error(fmt::format("{}: int64 overflow at key '{}{}'", op,
                                   key.substr(0, shown),
                                   key.size() > shown ? "..." : ""));
}

int64_t int_param(const params& p, const std::string& name, int64_t fallback) {
  auto i = p.find(name);
  if (i == p.end())
    return fallback;
  auto n = parse_int64(i->second);
  if (!n)
    throw operator_error(
      fmt::format("parameter '{}': '{}' is not an integer", name, i->second));
  return *n;
}

std::string text_param(const params& p, const std::string& name,
                       std::string fallback) {
  auto i = p.find(name);
  return i == p.end() ? std::move(fallback) : i->second;
}

} // namespace weir::ops
