#pragma once

// What the readers of delimited and JSON lines share (row_formats.cpp):
// values from text, and how problems show a value. Not for other callers.

#include <cstdint>
#include <string>
#include <string_view>

#include "messages/row_batch.hpp"
#include "messages/schema.hpp"

namespace weir::ops::detail {

enum class text_value { ok, invalid, out_of_range };

/// A whole decimal int64 with an optional sign.
text_value parse_int64_text(std::string_view s, int64_t& out);

/// A whole double (std::from_chars' general form, an optional '+');
/// underflow reads as the nearest double, overflow is out of range.
text_value parse_double_text(std::string_view s, double& out);

/// true, false, 1, 0 in any case.
bool parse_bool_text(std::string_view s, int64_t& out);

/// A timestamp (row_formats.hpp): ISO 8601 or integer milliseconds.
text_value parse_timestamp_text(std::string_view s, int64_t& out);

/// Parses `text` as a value of `c`'s type (int64, double, bool or
/// timestamp; anything else is invalid) and appends it when ok.
text_value push_parsed(column& c, std::string_view text);

/// `s` without spaces and tabs at either end.
std::string_view trim_blanks(std::string_view s);

/// "an int64", "a double", ...
std::string_view with_article(field_type t);

/// Appends `s` for a problem line: cut after 64 bytes (not inside a UTF-8
/// sequence) with "...", control characters as \n, \r, \t or \xNN.
void append_shown(std::string& out, std::string_view s);

/// Ends the value a caller appended to `c.chars` piece by piece.
inline void end_chars(column& c) {
  c.ends.push_back(static_cast<uint32_t>(c.chars.size()));
  if (!c.nulls.empty())
    c.nulls.push_back(0);
}

/// Cuts `c` down to its first `n` values (no-op when it has no more).
void truncate_column(column& c, size_t n);

/// The problem when `out` does not have the columns of `s`.
std::string check_columns(const schema& s, const row_batch& out);

/// Completes a row whose every column got its value.
inline void end_row(row_batch& out) {
  ++out.rows;
  out.push_time(0);
}

} // namespace weir::ops::detail
