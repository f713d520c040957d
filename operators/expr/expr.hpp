#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "messages/row_batch.hpp"
#include "messages/schema.hpp"

/// The expressions of the built-in filter, map and project operators: a
/// small SQL-like language, typed against the input schema when the job is
/// planned and evaluated a column at a time over row batches.
///
/// Grammar, loosest binding first (keywords and function names in any case):
///   or;  and;  not;  = == != <> < <= > >=;  || (string concatenation);
///   + -;  * / %;  unary -;  then literals (42, 1.5, 1e3, 'text' or "text"
///   with backslash escapes \\ \' \" \n \r \t \0 \xHH, true, false, null),
///   field names (status, or `any name` in backquotes, `` for a backquote),
///   function calls f(a, b) and parentheses.
///
/// Types: int64 op int64 is int64 (/ truncates, % takes the dividend's
/// sign), with a double it is double; timestamp ± int64 milliseconds is a
/// timestamp, timestamp - timestamp is int64. Comparisons compare numbers
/// with numbers, strings (and bytes) with strings, timestamps with
/// timestamps, bools with bools; and, or, not need bools.
///
/// Functions: lower, upper, trim (ASCII), length (characters of a string,
/// bytes of bytes), substr(s, start[, len]) (0-based, in characters; a
/// negative start counts from the end), contains, starts_with, ends_with,
/// concat(a, ...) (any types as text, nulls skipped, never null), abs,
/// to_int (from double: truncated; from string: null unless an integer;
/// from bool: 0/1; from timestamp: milliseconds), to_double, to_string (as
/// the text sinks write values), if(cond, a, b), is_null(x),
/// coalesce(a, b, ...).
///
/// Nulls as in SQL: null in, null out for operators and functions (but
/// is_null, coalesce, concat and if's untaken branch); and, or are
/// three-valued (false and null is false, true or null is true); a filter
/// keeps only rows whose predicate is true. A bare `null` takes the type
/// its context needs.
///
/// Errors at run time (operator_error, one line naming the expression):
/// integer overflow in + - * unary - abs, division or modulo by zero. Rows
/// that a condition excludes do not fail: `n != 0 and bytes / n > 2`,
/// `if(n = 0, 0, bytes / n)` and `coalesce(a, b / c)` evaluate the guarded
/// part only where it counts.
namespace weir::ops::expr {

/// The longest expression or select list accepted, in bytes.
constexpr size_t max_length = 64 * 1024;
/// The deepest nesting of an expression (operators, calls, parentheses).
constexpr size_t max_depth = 256;

/// A typed expression tree, immutable once compiled: one may be shared and
/// evaluated by several threads at once.
struct compiled_expr;

/// The expression, or `problem`: one line, e.g.
/// "at 9: unknown field 'stauts' (fields: user, status, bytes)" (positions
/// count bytes of the text from 1).
struct compile_result {
  std::shared_ptr<const compiled_expr> expr;
  field_type type = field_type::int64;
  bool nullable = false;
  std::string problem;
};

/// Parses and types `text` against the fields of `input`.
compile_result compile(std::string_view text, const schema& input);

/// compile() for a filter: the expression must be a bool.
compile_result compile_predicate(std::string_view text, const schema& input);

/// Sets `out` to the expression's value for each row of `in`, a batch of
/// the schema it was compiled against: a column of the result type, in.rows
/// long. Throws operator_error (overflow, division by zero, a batch whose
/// columns are not the schema's).
void evaluate(const compiled_expr& e, const row_batch& in, column& out);

/// The indices of the rows of `in` for which the bool `predicate` is true
/// (not false, not null), ascending.
std::vector<uint32_t> select_rows(const compiled_expr& predicate,
                                  const row_batch& in);

/// Appends rows `rows` of `in` to `out` (same column types; an `out`
/// without columns gets `in`'s), with their event times.
void gather(const row_batch& in, const std::vector<uint32_t>& rows,
            row_batch& out);

/// Appends the rows of `in` for which `predicate` is true to `out`.
void filter(const compiled_expr& predicate, const row_batch& in,
            row_batch& out);

/// One output field of a map or project.
struct select_item {
  std::string name;
  std::shared_ptr<const compiled_expr> expr;
  field_type type = field_type::int64;
  bool nullable = false;
};

/// The output fields, their schema, or `problem` (one line).
struct select_result {
  std::vector<select_item> items;
  schema output;
  std::string problem;
};

/// Parses a select list `expr [as name], ...` against `input`. A bare
/// field keeps its name, any other expression needs `as name`; `*` stands
/// for all input fields. Output names must differ.
select_result compile_select(std::string_view list, const schema& input);

/// Appends in.rows rows to `out` (an `out` without columns gets the output
/// schema's), one column per item, carrying the event times over. Throws
/// operator_error like evaluate(); `out` is unchanged then.
void evaluate_select(const select_result& select, const row_batch& in,
                     row_batch& out);

} // namespace weir::ops::expr
