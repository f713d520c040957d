#include "actors/job_master/collected_results.hpp"

#include <algorithm>

namespace weir {

namespace {

size_t bytes_of(const row_batch& b) {
  size_t n = 0;
  for (size_t i = 0; i < b.rows; ++i)
    n += row_bytes(b, i);
  return n;
}

} // namespace

bool collected_results::add(int32_t sink, collected_table rows) {
  auto n = bytes_of(rows.rows);
  if (max_bytes_ > 0 && bytes_ + n > max_bytes_)
    return false;
  bytes_ += n;
  auto i = tables_.find(sink);
  if (i == tables_.end())
    tables_.emplace(sink, std::move(rows));
  else
    i->second.rows.append(rows.rows);
  return true;
}

void collected_results::acknowledged(int64_t checkpoint, int32_t subtask) {
  auto i = tables_.find(subtask);
  pending_[checkpoint][subtask] = i == tables_.end() ? 0 : i->second.rows.rows;
}

void collected_results::commit(int64_t checkpoint) {
  committed_ = std::move(pending_[checkpoint]);
  pending_.erase(pending_.begin(), pending_.upper_bound(checkpoint));
}

void collected_results::abort_pending() {
  pending_.clear();
}

void collected_results::cut_back() {
  bytes_ = 0;
  for (auto& [sink, table] : tables_) {
    auto i = committed_.find(sink);
    auto keep = i == committed_.end() ? size_t{0} : i->second;
    if (keep < table.rows.rows) {
      row_batch kept{table.fields};
      for (size_t r = 0; r < keep; ++r)
        kept.push_row(table.rows, r);
      table.rows = std::move(kept);
    }
    bytes_ += bytes_of(table.rows);
  }
}

void collected_results::clear() {
  tables_.clear();
  bytes_ = 0;
}

std::vector<collected_table> collected_results::from(int64_t offset,
                                                     size_t max_bytes) const {
  std::vector<const collected_table*> ordered;
  ordered.reserve(tables_.size());
  for (auto& [sink, table] : tables_)
    ordered.push_back(&table);
  return rows_from(ordered, offset, max_bytes);
}

std::vector<collected_table> collected_results::take_all() {
  std::vector<collected_table> out;
  for (auto& [sink, table] : tables_)
    append_table(out, std::move(table));
  tables_.clear();
  bytes_ = 0;
  return out;
}

std::vector<collected_table>
one_table_per_sink(std::vector<collected_table> tables, const job_graph& g) {
  std::vector<collected_table> out;
  for (auto& v : g.vertices) {
    if (v.op != "collect")
      continue;
    collected_table t;
    t.sink = v.id;
    for (auto& e : g.edges)
      if (e.to == v.id) {
        t.fields = rows_of(g, e);
        break;
      }
    t.rows.reset(t.fields);
    for (auto& part : tables)
      if (part.sink == v.id) {
        if (t.rows.rows == 0)
          t = std::move(part);
        else
          t.rows.append(part.rows);
        part.sink.clear(); // taken
      }
    out.push_back(std::move(t));
  }
  for (auto& part : tables)
    if (!part.sink.empty())
      out.push_back(std::move(part));
  return out;
}

} // namespace weir
