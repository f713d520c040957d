#include "messages/collected_rows.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "messages/record.hpp"

namespace weir {

bool operator==(const collected_table& a, const collected_table& b) {
  return a.sink == b.sink && a.fields == b.fields && a.rows == b.rows;
}

// -- row_view ------------------------------------------------------------------

namespace {

bool is_integer(field_type t) {
  return holds_ints(t);
}
bool is_float(field_type t) {
  return t == field_type::float64;
}
bool is_boolean(field_type t) {
  return t == field_type::boolean;
}
bool is_text(field_type t) {
  return holds_chars(t);
}

std::string field_list(const schema& s) {
  std::string out;
  for (auto& f : s.fields)
    out += (out.empty() ? "" : ", ") + f.name;
  return out;
}

} // namespace

const schema& row_view::fields() const {
  return table_->fields;
}

const column& row_view::typed(std::string_view field,
                              bool (*fits)(field_type),
                              const char* wanted) const {
  auto i = field_index(field);
  auto& f = table_->fields.fields[i];
  if (!fits(f.type))
    throw std::invalid_argument(fmt::format(
      "field '{}' of sink '{}' is {}, not {}", field, table_->sink,
      to_string(f.type), wanted));
  auto& c = table_->rows.columns[i];
  if (c.is_null(index_))
    throw std::invalid_argument(fmt::format(
      "field '{}' of sink '{}' is null in row {}", field, table_->sink,
      index_));
  return c;
}

template <>
int64_t row_view::get<int64_t>(std::string_view field) const {
  return typed(field, is_integer, "int64").ints[index_];
}

template <>
double row_view::get<double>(std::string_view field) const {
  return typed(field, is_float, "double").floats[index_];
}

template <>
bool row_view::get<bool>(std::string_view field) const {
  return typed(field, is_boolean, "bool").ints[index_] != 0;
}

template <>
std::string_view row_view::get<std::string_view>(std::string_view field) const {
  return typed(field, is_text, "string").str(index_);
}

template <>
std::string row_view::get<std::string>(std::string_view field) const {
  return std::string{get<std::string_view>(field)};
}

size_t row_view::field_index(std::string_view field) const {
  auto i = table_->fields.find(field);
  if (!i)
    throw std::out_of_range(fmt::format("sink '{}' has no field '{}' (its "
                                        "fields: {})",
                                        table_->sink, field,
                                        field_list(table_->fields)));
  return *i;
}

bool row_view::is_null(std::string_view field) const {
  return table_->rows.columns[field_index(field)].is_null(index_);
}

std::string row_view::text(std::string_view field) const {
  return text(field_index(field));
}

std::string row_view::text(size_t i) const {
  if (i >= table_->rows.columns.size())
    throw std::out_of_range(fmt::format("sink '{}' has {} fields, not {}",
                                        table_->sink,
                                        table_->rows.columns.size(), i + 1));
  std::string out;
  append_value_text(out, table_->rows.columns[i], index_);
  return out;
}

std::string row_view::line() const {
  std::string out;
  append_row_text(out, table_->rows, index_);
  out.pop_back(); // the '\n'
  return out;
}

const collected_table& table_of(const std::vector<collected_table>& tables,
                                const std::string& sink) {
  std::string sinks;
  for (auto& t : tables) {
    if (t.sink == sink)
      return t;
    sinks += (sinks.empty() ? "'" : ", '") + t.sink + "'";
  }
  throw std::out_of_range(fmt::format(
    "no collect sink '{}' in the result (its sinks: {})", sink,
    sinks.empty() ? "none" : sinks));
}

size_t row_count(const std::vector<collected_table>& tables) {
  size_t n = 0;
  for (auto& t : tables)
    n += t.rows.rows;
  return n;
}

void append_table(std::vector<collected_table>& tables, collected_table&& t) {
  if (!tables.empty() && tables.back().sink == t.sink
      && tables.back().fields == t.fields) {
    tables.back().rows.append(t.rows);
    return;
  }
  tables.push_back(std::move(t));
}

size_t row_bytes(const row_batch& b, size_t i) {
  size_t n = 8;
  for (auto& c : b.columns)
    n += holds_chars(c.type) ? c.str(i).size() + 4 : 8;
  return n;
}

std::vector<collected_table>
rows_from(const std::vector<collected_table>& tables, int64_t offset,
          size_t max_bytes) {
  std::vector<const collected_table*> all;
  all.reserve(tables.size());
  for (auto& t : tables)
    all.push_back(&t);
  return rows_from(all, offset, max_bytes);
}

std::vector<collected_table>
rows_from(const std::vector<const collected_table*>& tables, int64_t offset,
          size_t max_bytes) {
  std::vector<collected_table> out;
  size_t taken = 0;
  size_t count = 0;
  auto skip = static_cast<size_t>(std::max<int64_t>(offset, 0));
  for (auto* table : tables) {
    auto& t = *table;
    if (skip >= t.rows.rows) {
      skip -= t.rows.rows;
      continue;
    }
    collected_table part{t.sink, t.fields, row_batch{t.fields}};
    for (auto i = skip; i < t.rows.rows; ++i) {
      auto n = row_bytes(t.rows, i);
      if (count > 0 && taken + n > max_bytes) {
        if (part.rows.rows > 0)
          out.push_back(std::move(part));
        return out;
      }
      part.rows.push_row(t.rows, i);
      taken += n;
      ++count;
    }
    skip = 0;
    out.push_back(std::move(part));
  }
  return out;
}

} // namespace weir
