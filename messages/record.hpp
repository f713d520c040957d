#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

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

/// Records travel between subtasks in batches, never one message per record.
struct record_batch {
  std::vector<record> records;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, record_batch& x) {
  return f(caf::meta::type_name("record_batch"), x.records);
}

inline bool operator==(const record_batch& a, const record_batch& b) {
  return a.records == b.records;
}

} // namespace weir
