#pragma once

// The rows a job's collect sinks gather: how results travel from a sink to
// its JobMaster, to the Dispatcher and its clients, and how they are
// stored (docs/operations.md § Collected results).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "messages/row_batch.hpp"
#include "messages/schema.hpp"

namespace weir {

struct collected_table;

/// One row of a collected table, read by field name and type (Flink's
/// Row#getFieldAs):
///
///   for (auto row : result.table("counts"))
///     fmt::print("{} {}\n", row.get<std::string>("word"),
///                row.get<int64_t>("n"));
///
/// get<T> takes int64_t (int64, timestamp and bool fields), double,
/// bool, std::string and std::string_view (string and bytes fields; a
/// view into the table). A field the table does not have throws
/// std::out_of_range, one of another type std::invalid_argument, a null
/// value std::invalid_argument: each naming the sink and the field.
class row_view {
public:
  row_view(const collected_table& table, size_t index)
    : table_(&table), index_(index) {}

  template <class T>
  T get(std::string_view field) const;

  /// Whether the field holds null (a nullable field).
  bool is_null(std::string_view field) const;
  /// The field's value as text, whatever its type (append_value_text).
  std::string text(std::string_view field) const;
  /// Field `i` of the schema as text (iteration over the columns).
  std::string text(size_t i) const;
  /// The row's fields as the text sinks write them, tab-separated.
  std::string line() const;

  /// The table's schema (its columns, in order) and this row's index.
  const schema& fields() const;
  size_t index() const { return index_; }

private:
  /// The index of `field`; throws std::out_of_range naming the fields.
  size_t field_index(std::string_view field) const;
  const column& typed(std::string_view field, bool (*fits)(field_type),
                      const char* wanted) const;

  const collected_table* table_;
  size_t index_;
};

template <>
int64_t row_view::get<int64_t>(std::string_view field) const;
template <>
double row_view::get<double>(std::string_view field) const;
template <>
bool row_view::get<bool>(std::string_view field) const;
template <>
std::string_view row_view::get<std::string_view>(std::string_view field) const;
template <>
std::string row_view::get<std::string>(std::string_view field) const;

/// Rows of one collect sink (vertex `sink`), of its input schema `fields`.
/// A job's result holds one table per collect sink vertex (empty when it
/// received nothing), in the job graph's order, each holding its
/// subtasks' rows in subtask order. Read it through a table_view.
struct collected_table {
  std::string sink;
  schema fields;
  row_batch rows;
};

/// A collected table's rows, to iterate (no begin() on collected_table
/// itself: CAF would take it for a list):
///
///   for (auto row : result.table("counts")) ...
class table_view {
public:
  explicit table_view(const collected_table& t) : t_(&t) {}
  /// Owns `t`: the view of a temporary result's table
  /// (`for (auto row : ctx.run(job).table("out"))`).
  explicit table_view(collected_table&& t)
    : owned_(std::make_shared<const collected_table>(std::move(t))),
      t_(owned_.get()) {}

  const std::string& sink() const { return t_->sink; }
  const schema& fields() const { return t_->fields; }
  size_t size() const { return t_->rows.rows; }
  bool empty() const { return t_->rows.rows == 0; }
  row_view operator[](size_t i) const { return row_view{*t_, i}; }
  const collected_table& table() const { return *t_; }

  class iterator {
  public:
    iterator(const collected_table* t, size_t i) : t_(t), i_(i) {}
    row_view operator*() const { return row_view{*t_, i_}; }
    iterator& operator++() {
      ++i_;
      return *this;
    }
    bool operator!=(const iterator& other) const { return i_ != other.i_; }
    bool operator==(const iterator& other) const { return i_ == other.i_; }

  private:
    const collected_table* t_;
    size_t i_;
  };
  iterator begin() const { return {t_, 0}; }
  iterator end() const { return {t_, t_->rows.rows}; }

private:
  std::shared_ptr<const collected_table> owned_;
  const collected_table* t_;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, collected_table& x) {
  return f(caf::meta::type_name("collected_table"), x.sink, x.fields, x.rows);
}

bool operator==(const collected_table& a, const collected_table& b);

/// Rows in all of `tables`.
size_t row_count(const std::vector<collected_table>& tables);

/// The table of sink `sink` in `tables`; throws std::out_of_range naming
/// it and the sinks there are.
const collected_table& table_of(const std::vector<collected_table>& tables,
                                const std::string& sink);

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
