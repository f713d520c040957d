#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "messages/row_batch.hpp"
#include "messages/schema.hpp"

// The text forms of rows: delimited lines (CSV, TSV, whitespace-separated)
// and JSON lines, read into and written from row batches. Plain functions,
// no state: the `parse` and `json_lines` operators and the text sinks call
// them once a line.
//
// Every parse_* function appends exactly one row to `out` (its columns are
// those of the schema, `out.rows` long) or appends nothing and returns a
// one-line problem naming the field, e.g. "field 'status': 'abc' is not an
// int64". The new row's event time is 0 (the caller may push_time()).
//
// Values in text, for the delimited formats and JSON strings of timestamp
// fields:
//   int64      decimal, optional sign ("+5", "-5")
//   double     decimal or scientific, "inf", "nan" (std::from_chars)
//   bool       true, false, 1, 0 (any case)
//   timestamp  ISO 8601: 2026-11-30T10:00:01Z, optional fraction of a
//              second (digits beyond milliseconds are cut), 'Z' or an
//              offset (+01:00, -0530, +01; none means UTC), 'T' or one
//              space between date and time, or the date alone (midnight
//              UTC); or integer milliseconds since the epoch
//   string     as it is; bytes likewise
// Numbers, bools and timestamps may have spaces and tabs around them;
// strings keep theirs.

namespace weir::ops {

/// A delimited line format.
struct delimited_format {
  /// ',' or '\t', or ' ': fields are separated by runs of spaces and tabs,
  /// and those before the first and after the last are ignored.
  char separator = ',';
  /// CSV double quotes (RFC 4180): a field in "..." may hold separators
  /// and "" for a quote.
  bool quoted = true;
};

/// "csv" {',', quoted}, "tsv" {'\t', not quoted}, "whitespace" {' ', not
/// quoted}; nullopt for any other name.
std::optional<delimited_format> parse_format_name(std::string_view name);

/// Parses `line` (without its '\n') as exactly `s.size()` fields and
/// appends them as a row of `out`; or returns the problem and appends
/// nothing. Empty fields are null when the field is nullable; otherwise a
/// problem, except for string and bytes fields (the empty string). In CSV,
/// "" is the empty string even for a nullable field. TSV fields of string
/// and bytes fields read the escapes \t \n \r \\ that append_delimited
/// writes (a backslash before anything else stays). Problems:
///   "3 fields, the schema has 6"
///   "field 'status': 'abc' is not an int64"   (also a double, a bool,
///                                               a timestamp)
///   "field 'bytes': 99999999999999999999 is out of the int64 range"
///   "field 'status' is empty and not nullable"
///   "field 'user': no closing quote", "field 'user': text after the
///   closing quote"
/// (values are cut after 64 bytes, control characters escaped).
std::string parse_delimited(std::string_view line, const delimited_format& f,
                            const schema& s, row_batch& out);

/// Appends row `row` of `b` as one line, then '\n': fields separated by
/// the format's separator (one space for whitespace), nulls as nothing.
/// CSV quotes a field that holds the separator, a quote, '\r' or '\n'
/// (doubling the quotes), and writes an empty string as "" (so that it
/// reads back as the empty string, not null). TSV (separator '\t', not
/// quoted) escapes tab, newline, carriage return and backslash as \t \n
/// \r \\. Other unquoted formats write values as they are. Numbers, bools
/// and timestamps as append_value_text writes them.
void append_delimited(std::string& out, const row_batch& b, size_t row,
                      const delimited_format& f);

/// Parses `line` as one JSON object and appends its fields named in `s`
/// as a row of `out` (other members are ignored; of a repeated member the
/// last counts); or returns the problem and appends nothing. JSON types
/// by field type: int64 integers; double numbers, and the strings "NaN",
/// "Infinity", "-Infinity"; bool true/false; string and bytes strings
/// (for bytes, \u0000..\u00ff are single bytes, as append_json_line writes
/// bytes that are not UTF-8); timestamp strings (see above) and integers
/// (milliseconds). null or a missing member is null where the field is
/// nullable. Bytes that are not UTF-8 are taken as they are. Problems:
///   "field 'bytes': \"12\" is a string, the schema says int64"
///   "field 'bytes': 12.5 is not an int64"
///   "field 'bytes': 99999999999999999999 is out of the int64 range"
///   "field 'ts': \"soon\" is not a timestamp"
///   "field 'status' is null and not nullable"
///   "field 'status' is missing and not nullable"
///   "not a JSON object", "an empty line, not a JSON object"
///   "not valid JSON: expected ':' at column 12" (and the like)
std::string parse_json_line(std::string_view line, const schema& s,
                            row_batch& out);

/// Appends row `row` of `b` (schema `s`) as one JSON object, then '\n':
/// the fields by name in schema order, no spaces. Timestamps as ISO 8601
/// strings, doubles in their shortest exact form ("NaN", "Infinity" and
/// "-Infinity" as strings), strings JSON-escaped with valid UTF-8 as it
/// is and each byte that is not UTF-8 as \u00XX, nulls as null.
void append_json_line(std::string& out, const row_batch& b, size_t row,
                      const schema& s);

/// `text` as a timestamp (the forms above), in milliseconds since the
/// epoch; nullopt when it is none or out of range.
std::optional<int64_t> parse_timestamp(std::string_view text);

/// Cuts the last rows of `b` down to `b.rows` (undoing a partly appended
/// row): each column longer than `b.rows` loses its extra values.
void drop_partial_row(row_batch& b);

} // namespace weir::ops
