#include "messages/record.hpp"

#include <fmt/format.h>

namespace weir {

bool operator==(const record& a, const record& b) {
  return a.key == b.key && a.is_text == b.is_text && a.timestamp == b.timestamp
         && (a.is_text ? a.text == b.text : a.num == b.num);
}

void append_text_line(std::string& out, const record& r) {
  if (!r.key.empty()) {
    out += r.key;
    out += '\t';
  }
  if (r.is_text) {
    out += r.text;
  } else {
    fmt::format_int digits{r.num};
    out.append(digits.data(), digits.size());
  }
  out += '\n';
}

} // namespace weir

#include <ctime>

namespace weir {

bool append_record(row_batch& out, const schema& s, const record& r) {
  auto key = s.find("key");
  auto value = s.find("value");
  if (!value || (!key && !r.key.empty()))
    return false;
  auto& v = out.columns[*value];
  if (r.is_text != (v.type == field_type::string))
    return false;
  if (key)
    out.columns[*key].push_str(r.key);
  if (r.is_text)
    v.push_str(r.text);
  else
    v.push_int(r.num);
  ++out.rows;
  out.push_time(r.timestamp);
  return true;
}

record to_record(const row_batch& b, const schema& s, size_t i) {
  record r;
  r.timestamp = b.time(i);
  if (default_schema::matches(s)) {
    if (auto key = s.find("key"))
      r.key = std::string{b.columns[*key].str(i)};
    auto& v = b.columns[*s.find("value")];
    r.is_text = v.type == field_type::string;
    if (r.is_text)
      r.text = std::string{v.str(i)};
    else
      r.num = v.ints[i];
    return r;
  }
  r.is_text = true;
  append_row_text(r.text, b, i);
  r.text.pop_back(); // the newline
  return r;
}

namespace {

void append_timestamp(std::string& out, int64_t ms) {
  auto secs = ms / 1000;
  auto frac = ms % 1000;
  if (frac < 0) {
    frac += 1000;
    secs -= 1;
  }
  auto t = static_cast<std::time_t>(secs);
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr) {
    fmt::format_int digits{ms};
    out.append(digits.data(), digits.size());
    return;
  }
  fmt::format_to(std::back_inserter(out), "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
                 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
                 tm.tm_min, tm.tm_sec);
  if (frac != 0)
    fmt::format_to(std::back_inserter(out), ".{:03}", frac);
  out += 'Z';
}

} // namespace

void append_value_text(std::string& out, const column& c, size_t i) {
  if (c.is_null(i))
    return;
  switch (c.type) {
    case field_type::int64: {
      fmt::format_int digits{c.ints[i]};
      out.append(digits.data(), digits.size());
      break;
    }
    case field_type::float64:
      fmt::format_to(std::back_inserter(out), "{}", c.floats[i]);
      break;
    case field_type::boolean:
      out += c.ints[i] != 0 ? "true" : "false";
      break;
    case field_type::string:
    case field_type::bytes: {
      auto s = c.str(i);
      out.append(s.data(), s.size());
      break;
    }
    case field_type::timestamp:
      append_timestamp(out, c.ints[i]);
      break;
  }
}

void append_row_text(std::string& out, const row_batch& b, size_t i,
                     char separator) {
  for (size_t c = 0; c < b.columns.size(); ++c) {
    if (c > 0)
      out += separator;
    append_value_text(out, b.columns[c], i);
  }
  out += '\n';
}

std::vector<record> to_records(const std::vector<collected_table>& tables) {
  std::vector<record> out;
  out.reserve(row_count(tables));
  for (auto& t : tables)
    for (size_t i = 0; i < t.rows.rows; ++i)
      out.push_back(to_record(t.rows, t.fields, i));
  return out;
}

} // namespace weir
