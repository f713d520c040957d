#include "config/parse.hpp"

#include <cctype>
#include <charconv>
#include <cmath>
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
  if (ec == std::errc::result_out_of_range && end == t.data() + i)
    v = HUGE_VAL; // out of every range
  else if (ec != std::errc{} || end != t.data() + i)
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

/// Factors to milliseconds.
std::optional<double> duration_factor(const std::string& unit) {
  return unit_factor(
    unit, {{"", 1},           {"ms", 1},         {"milli", 1},
           {"millis", 1},     {"s", 1000},       {"sec", 1000},
           {"secs", 1000},    {"second", 1000},  {"seconds", 1000},
           {"min", 60000},    {"m", 60000},      {"minute", 60000},
           {"minutes", 60000}, {"h", 3600000},   {"hour", 3600000},
           {"hours", 3600000}});
}

/// Factors to MiB.
std::optional<double> memory_factor(const std::string& unit) {
  constexpr double mib = 1024.0 * 1024.0;
  return unit_factor(
    unit, {{"", 1 / mib},  {"b", 1 / mib},  {"bytes", 1 / mib},
           {"k", 1 / 1024.0}, {"kb", 1 / 1024.0}, {"kibibytes", 1 / 1024.0},
           {"m", 1},        {"mb", 1},       {"mebibytes", 1},
           {"g", 1024},     {"gb", 1024},    {"gibibytes", 1024}});
}

/// A number with a unit in the unit `factor` converts to; nothing when the
/// text or its unit is bad.
std::optional<double>
scaled(const std::string& s,
       std::optional<double> (*factor)(const std::string&)) {
  auto nu = number_and_unit(s);
  if (!nu)
    return std::nullopt;
  auto f = factor(nu->second);
  if (!f)
    return std::nullopt;
  return nu->first * *f;
}

/// Whether a value converted from a double fits an int64 (the cast would
/// be undefined otherwise).
bool fits_int64(double v) {
  return v >= -9.2e18 && v <= 9.2e18;
}

/// A numeric value in its key's unit (a count, milliseconds, MiB); nothing
/// when `text` is not a number of that type. Whole numbers beyond int64
/// come back as +-infinity: they are outside every range.
std::optional<double> magnitude(config_type type, const std::string& text) {
  switch (type) {
    case config_type::integer: {
      auto t = trim(text);
      int64_t v = 0;
      auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
      if (t.empty() || end != t.data() + t.size())
        return std::nullopt;
      if (ec == std::errc::result_out_of_range)
        return t[0] == '-' ? -HUGE_VAL : HUGE_VAL;
      if (ec != std::errc{})
        return std::nullopt;
      return static_cast<double>(v);
    }
    case config_type::number: {
      auto nu = number_and_unit(text);
      if (!nu || !nu->second.empty())
        return std::nullopt;
      return nu->first;
    }
    case config_type::duration:
      return scaled(text, duration_factor);
    case config_type::memory:
      return scaled(text, memory_factor);
    default:
      return std::nullopt;
  }
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
  auto v = scaled(s, duration_factor);
  if (!v || !fits_int64(*v))
    return std::nullopt;
  return std::chrono::milliseconds{static_cast<int64_t>(*v)};
}

template <>
std::optional<memory_size> parse_value<memory_size>(const std::string& s) {
  auto v = scaled(s, memory_factor);
  if (!v || !fits_int64(*v))
    return std::nullopt;
  return memory_size{static_cast<int64_t>(*v)};
}

namespace {

/// What a value of a numeric type looks like, for "expected ..." messages.
std::string expected_form(config_type type) {
  switch (type) {
    case config_type::integer:
      return "expected an integer";
    case config_type::number:
      return "expected a number";
    case config_type::duration:
      return "expected a duration such as '500 ms' or '10 s'";
    default:
      return "expected a memory size such as '512m' or '1g'";
  }
}

} // namespace

std::string type_problem(const key_info& k, const std::string& value) {
  switch (k.type) {
    case config_type::integer:
    case config_type::number:
    case config_type::duration:
    case config_type::memory: {
      auto v = magnitude(k.type, value);
      if (!v)
        return expected_form(k.type);
      if (k.range.min.empty())
        return {};
      auto min = magnitude(k.type, std::string{k.range.min});
      auto max = magnitude(k.type, std::string{k.range.max});
      if (min && max && *v >= *min && *v <= *max)
        return {};
      return fmt::format("expected a value in [{}, {}]", k.range.min,
                         k.range.max);
    }
    case config_type::boolean:
      return parse_value<bool>(value) ? "" : "expected true or false";
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

bool same_value(const key_info& k, const std::string& a, const std::string& b) {
  switch (k.type) {
    case config_type::integer:
    case config_type::number:
    case config_type::duration:
    case config_type::memory: {
      auto x = magnitude(k.type, a);
      auto y = magnitude(k.type, b);
      return x && y && *x == *y;
    }
    case config_type::boolean:
      return parse_value<bool>(a) == parse_value<bool>(b);
    case config_type::text:
      break;
  }
  return trim(a) == trim(b);
}

} // namespace weir::detail
