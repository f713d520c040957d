#pragma once

// The rows a job's collect sinks gather: how results travel from a sink to
// its JobMaster, to the Dispatcher and its clients, and how they are
// stored (docs/operations.md § Collected results).

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "messages/row_batch.hpp"
#include "messages/schema.hpp"

namespace weir {

/// Rows of one collect sink (vertex `sink`), of its input schema `fields`.
/// A job's result holds one table per sink vertex, in the order of the
/// sinks' subtasks, each holding its subtasks' rows in subtask order.
struct collected_table {
  std::string sink;
  schema fields;
  row_batch rows;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, collected_table& x) {
  return f(caf::meta::type_name("collected_table"), x.sink, x.fields, x.rows);
}

bool operator==(const collected_table& a, const collected_table& b);

/// Rows in all of `tables`.
size_t row_count(const std::vector<collected_table>& tables);

/// Appends `t` to `tables`, into the last table when that one is of the
/// same sink and schema.
void append_table(std::vector<collected_table>& tables, collected_table&& t);

/// The bytes row `i` of `b` counts with against the collect bounds: its
/// values (8 a number, a string's length and 4) and 8 more.
size_t row_bytes(const row_batch& b, size_t i);

/// The rows of `tables` from the `offset`-th on (counting over the tables
/// in order), as many as fit into `max_bytes` by row_bytes, at least one
/// when there is one. The tables keep their sinks and schemas.
std::vector<collected_table>
rows_from(const std::vector<collected_table>& tables, int64_t offset,
          size_t max_bytes);

/// rows_from over tables held elsewhere (in this order).
std::vector<collected_table>
rows_from(const std::vector<const collected_table*>& tables, int64_t offset,
          size_t max_bytes);

} // namespace weir
