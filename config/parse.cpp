#include "config/parse.hpp"

#include <cctype>
#include <charconv>
#include <initializer_list>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace weir::detail {

namespace {

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// Splits "500 ms" into 500 and "ms"; nothing if the number part is bad.
std::optional<std::pair<double, std::string>> number_and_unit(const std::string& s) {
  auto t = trim(s);
  size_t i = 0;
  while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.'))
    ++i;
  if (i == 0)
    return std::nullopt;
  double v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + i, v);
  if (ec != std::errc{} || end != t.data() + i)
    return std::nullopt;
  return std::make_pair(v, lower(trim(t.substr(i))));
}

std::optional<double> unit_factor(const std::string& unit,
                                  std::initializer_list<std::pair<const char*, double>> units) {
  for (auto& [name, factor] : units)
    if (unit == name)
      return factor;
  return std::nullopt;
}

} // namespace

std::string trim(const std::string& s) {
  auto first = s.find_first_not_of(" \t");
  auto last = s.find_last_not_of(" \t");
  return first == std::string::npos ? std::string{}
                                    : s.substr(first, last - first + 1);
}

template <>
std::optional<int64_t> parse_value<int64_t>(const std::string& s) {
  auto t = trim(s);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc{} || end != t.data() + t.size() || t.empty())
    return std::nullopt;
  return v;
}

template <>
std::optional<double> parse_value<double>(const std::string& s) {
  auto nu = number_and_unit(s);
  if (!nu || !nu->second.empty())
    return std::nullopt;
  return nu->first;
}

template <>
std::optional<bool> parse_value<bool>(const std::string& s) {
  auto t = lower(trim(s));
  if (t != "true" && t != "false")
    return std::nullopt;
  return t == "true";
}

template <>
std::optional<std::string> parse_value<std::string>(const std::string& s) {
  return trim(s);
}

template <>
std::optional<std::chrono::milliseconds>
parse_value<std::chrono::milliseconds>(const std::string& s) {
  auto nu = number_and_unit(s);
  if (!nu)
    return std::nullopt;
  auto factor = unit_factor(
    nu->second, {{"", 1},           {"ms", 1},         {"milli", 1},
                 {"millis", 1},     {"s", 1000},       {"sec", 1000},
                 {"secs", 1000},    {"second", 1000},  {"seconds", 1000},
                 {"min", 60000},    {"m", 60000},      {"minute", 60000},
                 {"minutes", 60000}, {"h", 3600000},   {"hour", 3600000},
                 {"hours", 3600000}});
  if (!factor)
    return std::nullopt;
  return std::chrono::milliseconds{static_cast<int64_t>(nu->first * *factor)};
}

template <>
std::optional<memory_size> parse_value<memory_size>(const std::string& s) {
  auto nu = number_and_unit(s);
  if (!nu)
    return std::nullopt;
  constexpr double mib = 1024.0 * 1024.0;
  auto factor = unit_factor(
    nu->second, {{"", 1 / mib},  {"b", 1 / mib},  {"bytes", 1 / mib},
                 {"k", 1 / 1024.0}, {"kb", 1 / 1024.0}, {"kibibytes", 1 / 1024.0},
                 {"m", 1},        {"mb", 1},       {"mebibytes", 1},
                 {"g", 1024},     {"gb", 1024},    {"gibibytes", 1024}});
  if (!factor)
    return std::nullopt;
  return memory_size{static_cast<int64_t>(nu->first * *factor)};
}

std::string type_problem(const key_info& k, const std::string& value) {
  switch (k.type) {
    case config_type::integer:
      return parse_value<int64_t>(value) ? "" : "expected an integer";
    case config_type::number:
      return parse_value<double>(value) ? "" : "expected a number";
    case config_type::boolean:
      return parse_value<bool>(value) ? "" : "expected true or false";
    case config_type::duration:
      return parse_value<std::chrono::milliseconds>(value)
               ? ""
               : "expected a duration such as '500 ms' or '10 s'";
    case config_type::memory:
      return parse_value<memory_size>(value)
               ? ""
               : "expected a memory size such as '512m' or '1g'";
    case config_type::text:
      break;
  }
  if (k.choices.empty())
    return {};
  auto t = trim(value);
  std::string_view rest = k.choices;
  std::vector<std::string_view> choices;
  while (!rest.empty()) {
    auto bar = rest.find('|');
    choices.push_back(rest.substr(0, bar));
    rest = bar == std::string_view::npos ? std::string_view{}
                                         : rest.substr(bar + 1);
  }
  for (auto c : choices)
    if (c == t)
      return {};
  return fmt::format("expected one of {}", fmt::join(choices, ", "));
}

} // namespace weir::detail
