#include "operators/formats/row_formats.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "operators/formats/row_formats_internal.hpp"

namespace weir::ops {

std::optional<delimited_format> parse_format_name(std::string_view name) {
  if (name == "csv")
    return delimited_format{',', true};
  if (name == "tsv")
    return delimited_format{'\t', false};
  if (name == "whitespace")
    return delimited_format{' ', false};
  return std::nullopt;
}

std::optional<int64_t> parse_timestamp(std::string_view text) {
  int64_t ms = 0;
  if (detail::parse_timestamp_text(detail::trim_blanks(text), ms)
      != detail::text_value::ok)
    return std::nullopt;
  return ms;
}

void drop_partial_row(row_batch& b) {
  for (auto& c : b.columns)
    detail::truncate_column(c, b.rows);
  if (b.times.size() > b.rows)
    b.times.resize(b.rows);
}

} // namespace weir::ops

namespace weir::ops::detail {

namespace {

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

/// Reads `n` digits at `p` into `out`; false unless all are digits.
bool digits(const char*& p, const char* end, int n, int& out) {
  if (end - p < n)
    return false;
  out = 0;
  for (int i = 0; i < n; ++i, ++p) {
    if (!is_digit(*p))
      return false;
    out = out * 10 + (*p - '0');
  }
  return true;
}

bool expect(const char*& p, const char* end, char c) {
  if (p == end || *p != c)
    return false;
  ++p;
  return true;
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// days_from_civil).
int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int days_in_month(int y, int m) {
  static constexpr int days[] = {31, 28, 31, 30, 31, 30,
                                 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : days[m - 1];
}

/// YYYY-MM-DD[(T|t| )HH:MM[:SS[(.|,)F...]][Z|z|(+|-)HH[[:]MM]]].
bool parse_iso(std::string_view s, int64_t& out) {
  const char* p = s.data();
  const char* end = p + s.size();
  int year = 0, month = 0, day = 0;
  if (!digits(p, end, 4, year) || !expect(p, end, '-')
      || !digits(p, end, 2, month) || !expect(p, end, '-')
      || !digits(p, end, 2, day))
    return false;
  if (month < 1 || month > 12 || day < 1 || day > days_in_month(year, month))
    return false;
  int64_t ms = days_from_civil(year, month, day) * 86400000;
  if (p == end) {
    out = ms;
    return true;
  }
  if (*p != 'T' && *p != 't' && *p != ' ')
    return false;
  ++p;
  int hour = 0, minute = 0, second = 0, millis = 0;
  if (!digits(p, end, 2, hour) || !expect(p, end, ':')
      || !digits(p, end, 2, minute))
    return false;
  if (p != end && *p == ':') {
    ++p;
    if (!digits(p, end, 2, second))
      return false;
    if (p != end && (*p == '.' || *p == ',')) {
      ++p;
      int n = 0;
      for (; p != end && is_digit(*p); ++p, ++n)
        if (n < 3)
          millis = millis * 10 + (*p - '0');
      if (n == 0)
        return false;
      for (; n < 3; ++n)
        millis *= 10;
    }
  }
  if (hour > 23 || minute > 59 || second > 59)
    return false;
  ms += ((hour * 60 + minute) * 60 + second) * int64_t{1000} + millis;
  if (p != end && (*p == 'Z' || *p == 'z')) {
    ++p;
  } else if (p != end && (*p == '+' || *p == '-')) {
    int sign = *p == '-' ? -1 : 1;
    ++p;
    int oh = 0, om = 0;
    if (!digits(p, end, 2, oh))
      return false;
    if (p != end) {
      expect(p, end, ':');
      if (!digits(p, end, 2, om))
        return false;
    }
    if (oh > 23 || om > 59)
      return false;
    ms -= sign * (oh * 60 + om) * int64_t{60000};
  }
  if (p != end)
    return false;
  out = ms;
  return true;
}

/// Steps over a leading '+'; false when a sign or nothing follows it.
bool skip_plus(const char*& p, const char* end) {
  if (p == end || *p != '+')
    return true;
  ++p;
  return p != end && *p != '-' && *p != '+';
}

/// All of `s` as a number by std::from_chars, with an optional '+'.
template <class T>
text_value from_chars_whole(std::string_view s, T& out) {
  const char* p = s.data();
  const char* end = p + s.size();
  if (!skip_plus(p, end))
    return text_value::invalid;
  auto [ptr, ec] = std::from_chars(p, end, out);
  if (p == end || ptr != end)
    return text_value::invalid;
  if (ec == std::errc::result_out_of_range)
    return text_value::out_of_range;
  return ec == std::errc{} ? text_value::ok : text_value::invalid;
}

} // namespace

text_value parse_int64_text(std::string_view s, int64_t& out) {
  return from_chars_whole(s, out);
}

text_value parse_double_text(std::string_view s, double& out) {
  auto r = from_chars_whole(s, out);
  if (r == text_value::out_of_range) {
    // Overflow, or an underflow that from_chars also reports: strtod says
    // which (and gives the nearest double of an underflow).
    std::string copy{s};
    double x = std::strtod(copy.c_str(), nullptr);
    if (std::isinf(x))
      return text_value::out_of_range;
    out = x;
    return text_value::ok;
  }
  return r;
}

bool parse_bool_text(std::string_view s, int64_t& out) {
  auto is = [&](std::string_view word) {
    if (s.size() != word.size())
      return false;
    for (size_t i = 0; i < s.size(); ++i)
      if ((s[i] | 0x20) != word[i])
        return false;
    return true;
  };
  if (s == "1" || is("true")) {
    out = 1;
    return true;
  }
  if (s == "0" || is("false")) {
    out = 0;
    return true;
  }
  return false;
}

text_value parse_timestamp_text(std::string_view s, int64_t& out) {
  // ISO 8601 dates have a '-' after four digits; milliseconds are all
  // digits after an optional sign.
  if (s.size() >= 10 && s[4] == '-')
    return parse_iso(s, out) ? text_value::ok : text_value::invalid;
  return parse_int64_text(s, out);
}

text_value push_parsed(column& c, std::string_view text) {
  text_value r = text_value::invalid;
  int64_t x = 0;
  switch (c.type) {
    case field_type::int64:
      r = parse_int64_text(text, x);
      break;
    case field_type::boolean:
      r = parse_bool_text(text, x) ? text_value::ok : text_value::invalid;
      break;
    case field_type::timestamp:
      r = parse_timestamp_text(text, x);
      break;
    case field_type::float64: {
      double d = 0;
      r = parse_double_text(text, d);
      if (r == text_value::ok)
        c.push_float(d);
      return r;
    }
    default:
      return r;
  }
  if (r == text_value::ok)
    c.push_int(x);
  return r;
}

std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

std::string_view with_article(field_type t) {
  switch (t) {
    case field_type::int64:
      return "an int64";
    case field_type::float64:
      return "a double";
    case field_type::boolean:
      return "a bool";
    case field_type::string:
      return "a string";
    case field_type::bytes:
      return "bytes";
    case field_type::timestamp:
      return "a timestamp";
  }
  return "a value";
}

void append_shown(std::string& out, std::string_view s) {
  constexpr size_t most = 64;
  bool cut = s.size() > most;
  if (cut) {
    size_t n = most;
    // Not inside a UTF-8 sequence: back off its continuation bytes.
    for (int k = 0; k < 3 && n > 0
                    && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80;
         ++k)
      --n;
    s = s.substr(0, n);
  }
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u != 0x7F) {
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", u);
    }
  }
  if (cut)
    out += "...";
}

void truncate_column(column& c, size_t n) {
  if (holds_chars(c.type)) {
    if (c.ends.size() > n)
      c.ends.resize(n);
    if (c.ends.size() == n) // also drops bytes appended without an end
      c.chars.resize(n == 0 ? 0 : c.ends[n - 1]);
  } else if (c.type == field_type::float64) {
    if (c.floats.size() > n)
      c.floats.resize(n);
  } else if (c.ints.size() > n) {
    c.ints.resize(n);
  }
  if (c.nulls.size() > n) {
    c.nulls.resize(n);
    // Empty while no row is null (row_batch.hpp).
    if (std::memchr(c.nulls.data(), 1, n) == nullptr)
      c.nulls.clear();
  }
}

std::string check_columns(const schema& s, const row_batch& out) {
  bool fits = out.columns.size() == s.size();
  for (size_t i = 0; fits && i < s.size(); ++i)
    fits = out.columns[i].type == s.fields[i].type;
  if (fits)
    return {};
  return fmt::format("the batch's columns do not have the types of {}",
                     to_string(s));
}

} // namespace weir::ops::detail
