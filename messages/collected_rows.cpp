#include "messages/collected_rows.hpp"

#include <algorithm>

namespace weir {

bool operator==(const collected_table& a, const collected_table& b) {
  return a.sink == b.sink && a.fields == b.fields && a.rows == b.rows;
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
