#pragma once

// Typed access to the fields of rows by name, for user operators: look a
// field up once (in open(), against operator_context::input or ::output),
// then read or write it per row without a name lookup.
//
//   auto bytes = weir::ops::field_ref::of(*ctx.input, "bytes",
//                                         weir::field_type::int64);
//   for (size_t i = 0; i < in.rows; ++i)
//     total += bytes.int64(in, i);

#include <cstdint>
#include <string>
#include <string_view>

#include "messages/row_batch.hpp"
#include "operators/operator.hpp"

namespace weir::ops {

/// One field of a schema, resolved: its index and type.
class field_ref {
public:
  field_ref() = default;

  /// The field `name` of `s`, which must have type `type`; throws
  /// operator_error naming the field and both types otherwise ("field
  /// 'bytes' is string, the operator reads int64").
  static field_ref of(const schema& s, std::string_view name, field_type type) {
    auto i = s.find(name);
    if (!i)
      throw operator_error("field '" + std::string{name} + "' is not in "
                           + to_string(s));
    if (s.fields[*i].type != type)
      throw operator_error("field '" + std::string{name} + "' is "
                           + std::string{to_string(s.fields[*i].type)}
                           + ", the operator reads "
                           + std::string{to_string(type)});
    field_ref f;
    f.index_ = *i;
    f.type_ = type;
    return f;
  }

  size_t index() const { return index_; }
  field_type type() const { return type_; }

  bool is_null(const row_batch& b, size_t row) const {
    return b.columns[index_].is_null(row);
  }
  /// int64, bool (0/1) and timestamp (ms) fields.
  int64_t int64(const row_batch& b, size_t row) const {
    return b.columns[index_].ints[row];
  }
  double float64(const row_batch& b, size_t row) const {
    return b.columns[index_].floats[row];
  }
  bool boolean(const row_batch& b, size_t row) const {
    return b.columns[index_].ints[row] != 0;
  }
  /// string and bytes fields: a view into the batch.
  std::string_view str(const row_batch& b, size_t row) const {
    return b.columns[index_].str(row);
  }

  /// Writers: set this field of the row being appended to `b` (every
  /// field of a row is set once, then row_done(b)).
  void set(row_batch& b, int64_t x) const { b.columns[index_].push_int(x); }
  void set(row_batch& b, double x) const { b.columns[index_].push_float(x); }
  void set(row_batch& b, std::string_view x) const {
    b.columns[index_].push_str(x);
  }
  void set_null(row_batch& b) const { b.columns[index_].push_null(); }

private:
  size_t index_ = 0;
  field_type type_ = field_type::int64;
};

/// Ends the row whose fields were just set (with event time `time`).
inline void row_done(row_batch& b, int64_t time = 0) {
  ++b.rows;
  b.push_time(time);
}

} // namespace weir::ops
