#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "messages/collected_rows.hpp"
#include "messages/row_batch.hpp"

namespace weir {

/// One data record: a key (empty when unkeyed), a value that is either an
/// integer or a text, and an event timestamp in milliseconds.
struct record {
  std::string key;
  std::string text;   ///< the value when `is_text`
  int64_t num = 0;    ///< the value otherwise
  int64_t timestamp = 0;
  bool is_text = false;

  static record integer(std::string key, int64_t value, int64_t ts = 0) {
    return record{std::move(key), {}, value, ts, false};
  }
  static record string(std::string key, std::string value, int64_t ts = 0) {
    return record{std::move(key), std::move(value), 0, ts, true};
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, record& x) {
  return f(caf::meta::type_name("record"), x.key, x.text, x.num, x.timestamp,
           x.is_text);
}

bool operator==(const record& a, const record& b);

/// The text form used by the text_file and stdout sinks and by the CLI for
/// collected records: `key<TAB>value`, or just `value` for unkeyed records.
void append_text_line(std::string& out, const record& r);

/// Appends `r` as a row of `out`, a batch of one of the default schemas
/// `s` (default_schema::matches). False (nothing appended) when the record
/// does not fit: a text value for an int64 field or the other way round, a
/// key where the schema has none.
bool append_record(row_batch& out, const schema& s, const record& r);

/// Row `i` of `b` (schema `s`) as a record: the key and value fields of a
/// default schema; any other row as an unkeyed text record holding the
/// row's text form (append_row_text without the newline).
record to_record(const row_batch& b, const schema& s, size_t i);

/// Appends value `i` of column `c` as text: integers in decimal, doubles
/// in their shortest exact form, bools as true/false, timestamps as ISO
/// 8601 UTC (2026-11-30T10:00:01Z, milliseconds when not zero), strings
/// and bytes as they are, null as nothing.
void append_value_text(std::string& out, const column& c, size_t i);

/// Appends row `i` of `b` as one line: its fields' text forms separated
/// by `separator`, then '\n' (the text sinks' format).
void append_row_text(std::string& out, const row_batch& b, size_t i,
                     char separator = '\t');

/// The rows of `tables` as records (the record API's adapter, e.g. a
/// driver's job_outcome::records): rows of a default schema as their
/// records, any other row as to_record makes it.
std::vector<record> to_records(const std::vector<collected_table>& tables);

} // namespace weir
