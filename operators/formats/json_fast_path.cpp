// The fast path of parse_json_line: simdjson's validating DOM parser reads
// the line, and values that fit their fields in the plain way are stored.
// Anything else (a line simdjson refuses, a value of another type, a bytes
// field, a missing field that may not be null) leaves the row untouched
// and goes to weir's scanner (json_format.cpp), which decides and names
// the field and column of what is wrong: simdjson's errors cannot. Per
// line, simdjson is about 1.5x the scanner (bench/json_lines.cpp;
// docs/rows.md § JSON lines).

#include <cstring>
#include <string>
#include <string_view>

#include <fmt/format.h>
#include <simdjson.h>

#include "operators/formats/row_formats_internal.hpp"

namespace weir::ops::detail {

namespace {

/// Longer lines go to the scanner: a thread's parser keeps its largest
/// buffers, so they stay small.
constexpr size_t max_fast_line = 64 * 1024;

/// The scanner refuses nesting deeper than 64 levels; simdjson refuses at
/// most as deep, and the scanner decides the rest.
constexpr size_t max_fast_depth = 64;

/// One per thread that parses: simdjson's parser reuses its buffers, and
/// the line is copied behind padding simdjson may read past its end.
struct fast_reader {
  simdjson::dom::parser parser{max_fast_line};
  std::string padded;
  /// Whether the parser got its buffers and depth limit.
  bool ready = false;
};

fast_reader& reader() {
  thread_local fast_reader r;
  return r;
}

bool store_string(std::string_view text, const field& f, column& c) {
  if (f.type == field_type::string) {
    c.push_str(text);
    return true;
  }
  if (f.type == field_type::timestamp)
    return push_parsed(c, trim_blanks(text)) == text_value::ok;
  if (f.type == field_type::float64) {
    if (text == "NaN")
      c.push_float(std::nan(""));
    else if (text == "Infinity")
      c.push_float(HUGE_VAL);
    else if (text == "-Infinity")
      c.push_float(-HUGE_VAL);
    else
      return false;
    return true;
  }
  return false;
}

bool store_int(int64_t x, const field& f, column& c) {
  switch (f.type) {
    case field_type::int64:
      c.push_int(x);
      return true;
    case field_type::float64:
      // simdjson reads -0 as the integer 0: the scanner keeps its sign.
      if (x == 0)
        return false;
      c.push_float(static_cast<double>(x));
      return true;
    case field_type::timestamp: {
      fmt::format_int digits{x};
      return push_parsed(c, {digits.data(), digits.size()})
             == text_value::ok;
    }
    default:
      return false;
  }
}

bool store(const simdjson::dom::element& value, const field& f, column& c) {
  using simdjson::dom::element_type;
  switch (value.type()) {
    case element_type::STRING:
      return store_string(value.get_string().value_unsafe(), f, c);
    case element_type::INT64:
      return store_int(value.get_int64().value_unsafe(), f, c);
    case element_type::DOUBLE:
      if (f.type != field_type::float64)
        return false;
      c.push_float(value.get_double().value_unsafe());
      return true;
    case element_type::BOOL:
      if (f.type != field_type::boolean)
        return false;
      c.push_int(value.get_bool().value_unsafe() ? 1 : 0);
      return true;
    case element_type::NULL_VALUE:
      if (!f.nullable)
        return false;
      c.push_null();
      return true;
    default: // uint64 beyond int64, arrays, objects
      return false;
  }
}

bool fill(const simdjson::dom::object& members, const schema& s,
          row_batch& out) {
  size_t hint = 0;
  for (auto [key, value] : members) {
    auto i = find_member_field(s, key, hint);
    if (i == s.size())
      continue;
    auto& c = out.columns[i];
    if (c.size() > out.rows) // a repeated member: the last counts
      truncate_column(c, out.rows);
    if (!store(value, s.fields[i], c))
      return false;
  }
  for (size_t i = 0; i < s.size(); ++i) {
    auto& c = out.columns[i];
    if (c.size() > out.rows)
      continue;
    if (!s.fields[i].nullable)
      return false;
    c.push_null();
  }
  return true;
}

} // namespace

bool fast_json_line(std::string_view line, const schema& s, row_batch& out) {
  if (line.size() > max_fast_line)
    return false;
  // \u00XX in a bytes field is one byte, not UTF-8: the scanner's rule.
  for (auto& f : s.fields)
    if (f.type == field_type::bytes)
      return false;
  auto& r = reader();
  if (!r.ready) {
    // Growing later keeps this depth limit (parser::ensure_capacity).
    if (r.parser.allocate(4096, max_fast_depth) != simdjson::SUCCESS)
      return false;
    r.ready = true;
  }
  // Grows only: what lies behind the line is padding, whatever it holds.
  if (r.padded.size() < line.size() + simdjson::SIMDJSON_PADDING)
    r.padded.resize(line.size() + simdjson::SIMDJSON_PADDING);
  std::memcpy(r.padded.data(), line.data(), line.size());
  simdjson::dom::object members;
  if (r.parser.parse(r.padded.data(), line.size(), false).get(members))
    return false;
  if (fill(members, s, out))
    return true;
  for (auto& c : out.columns)
    truncate_column(c, out.rows);
  return false;
}

} // namespace weir::ops::detail
