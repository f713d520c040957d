#pragma once

// Row batches for tests (unit and actor tests alike): build small batches of
// the default schemas from values or records, and read batches back as
// records (messages/record.hpp's adapters), so that expectations written on
// records stay as they were.
#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "messages/record.hpp"
#include "messages/row_batch.hpp"
#include "messages/schema.hpp"
#include "operators/builtin/aggregation.hpp"

namespace weir::test {

/// (value: int64) rows with these values.
inline row_batch numbers(std::initializer_list<int64_t> values) {
  row_batch b{default_schema::numbers()};
  for (auto v : values) {
    b.columns[0].push_int(v);
    ++b.rows;
  }
  return b;
}

/// (value: int64) rows from..to, or (key: string, value: int64) rows with
/// key `key` when it is not empty.
inline row_batch numbers(int64_t from, int64_t to, const std::string& key = {}) {
  row_batch b{key.empty() ? default_schema::numbers()
                          : default_schema::keyed_numbers()};
  for (auto i = from; i <= to; ++i) {
    if (!key.empty())
      b.columns[0].push_str(key);
    b.columns.back().push_int(i);
    ++b.rows;
  }
  return b;
}

/// (key: string, value: int64) rows.
inline row_batch
keyed(std::initializer_list<std::pair<std::string, int64_t>> pairs) {
  row_batch b{default_schema::keyed_numbers()};
  for (auto& [k, v] : pairs) {
    b.columns[0].push_str(k);
    b.columns[1].push_int(v);
    ++b.rows;
  }
  return b;
}

/// (value: string) rows.
inline row_batch lines(std::initializer_list<std::string> texts) {
  row_batch b{default_schema::lines()};
  for (auto& t : texts) {
    b.columns[0].push_str(t);
    ++b.rows;
  }
  return b;
}

/// The default schema (default_schema::matches) whose column types are
/// those of `b`.
inline schema default_schema_of(const row_batch& b) {
  for (auto s : {default_schema::numbers(), default_schema::lines(),
                 default_schema::keyed_numbers(),
                 default_schema::keyed_lines()}) {
    bool same = s.size() == b.columns.size();
    for (size_t i = 0; same && i < s.size(); ++i)
      same = s.fields[i].type == b.columns[i].type;
    if (same)
      return s;
  }
  FAIL("the batch's columns are not those of a default schema");
  return {};
}

/// The default schema that holds `rs`: keyed when some record has a key,
/// of string values when the records are text (all must agree).
inline schema default_schema_of(const std::vector<record>& rs) {
  bool keyed_rows = false;
  for (auto& r : rs)
    keyed_rows = keyed_rows || !r.key.empty();
  bool text = !rs.empty() && rs.front().is_text;
  for (auto& r : rs)
    REQUIRE_MESSAGE(r.is_text == text,
                    "text and int64 values cannot share a batch");
  if (keyed_rows)
    return text ? default_schema::keyed_lines()
                : default_schema::keyed_numbers();
  return text ? default_schema::lines() : default_schema::numbers();
}

/// `rs` as rows of `s` (a default schema), event times included.
inline row_batch to_rows(const schema& s, const std::vector<record>& rs) {
  row_batch b{s};
  for (auto& r : rs)
    REQUIRE_MESSAGE(append_record(b, s, r),
                    "a record does not fit " << to_string(s));
  return b;
}

/// `rs` as rows of the default schema that holds them.
inline row_batch to_rows(const std::vector<record>& rs) {
  return to_rows(default_schema_of(rs), rs);
}

/// The rows of `b` (schema `s`) as records (to_record).
inline std::vector<record> to_records(const row_batch& b, const schema& s) {
  std::vector<record> out;
  out.reserve(b.rows);
  for (size_t i = 0; i < b.rows; ++i)
    out.push_back(to_record(b, s, i));
  return out;
}

/// The rows of `b`, a batch of a default schema, as records.
inline std::vector<record> to_records(const row_batch& b) {
  return to_records(b, default_schema_of(b));
}

/// `rs` as the table of collect sink `sink`, in the default schema that
/// holds them.
inline collected_table table_of(const std::vector<record>& rs,
                                const std::string& sink = "out") {
  auto s = default_schema_of(rs);
  return collected_table{sink, s, to_rows(s, rs)};
}

/// `rs` as one collect sink's result (none when `rs` is empty).
inline std::vector<collected_table>
tables_of(const std::vector<record>& rs, const std::string& sink = "out") {
  if (rs.empty())
    return {};
  return {table_of(rs, sink)};
}

/// Two collect sinks' results: "counts" of (key: string, value: int64)
/// with event times, and "events" of every field type, with nulls, a
/// string that is not UTF-8 and extreme values.
inline std::vector<collected_table> sample_tables() {
  collected_table counts{"counts", default_schema::keyed_numbers(), {}};
  counts.rows = to_rows(counts.fields,
                        {record::integer("the", 3, 7),
                         record::integer("", std::numeric_limits<int64_t>::min())});
  auto parsed = parse_schema("name: string?, n: int64, x: double?, ok: bool, "
                             "at: timestamp?, raw: bytes");
  REQUIRE(parsed.problem.empty());
  collected_table events{"events", parsed.value, row_batch{parsed.value}};
  auto& c = events.rows.columns;
  c[0].push_str("x\ty");
  c[1].push_int(std::numeric_limits<int64_t>::max());
  c[2].push_float(-0.0);
  c[3].push_int(1);
  c[4].push_int(1764496801000);
  c[5].push_str(std::string("\xff\0z", 3));
  ++events.rows.rows;
  c[0].push_null();
  c[1].push_int(-1);
  c[2].push_null();
  c[3].push_int(0);
  c[4].push_null();
  c[5].push_str("");
  ++events.rows.rows;
  return {counts, events};
}

/// Drains `agg` (its output is a default schema) as records sorted by key
/// (drain() gives them in no particular order).
inline std::vector<record> drained_sorted(ops::keyed_aggregation& agg) {
  row_batch b{agg.output()};
  agg.drain(b);
  auto out = to_records(b, agg.output());
  std::sort(out.begin(), out.end(),
            [](const record& a, const record& b) { return a.key < b.key; });
  return out;
}

} // namespace weir::test

namespace doctest {

/// Failed checks print rows as text ("[1, 2]", "[a\t1]").
template <>
struct StringMaker<weir::row_batch> {
  static String convert(const weir::row_batch& b) {
    std::string out = "[";
    for (size_t i = 0; i < b.rows; ++i) {
      if (i > 0)
        out += ", ";
      std::string line;
      weir::append_row_text(line, b, i);
      line.pop_back();
      out += line;
      if (b.time(i) != 0)
        out += " @" + std::to_string(b.time(i));
    }
    out += "]";
    return String{out.c_str()};
  }
};

/// Failed checks print records as "key=value@time".
template <>
struct StringMaker<weir::record> {
  static String convert(const weir::record& r) {
    std::string out = r.key.empty() ? "" : r.key + "=";
    out += r.is_text ? "\"" + r.text + "\"" : std::to_string(r.num);
    if (r.timestamp != 0)
      out += "@" + std::to_string(r.timestamp);
    return String{out.c_str()};
  }
};

} // namespace doctest
