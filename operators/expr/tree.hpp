#pragma once

// The typed tree that expr_parse.cpp builds and expr_eval.cpp evaluates
// (operators/expr/expr.hpp): internal to the expression engine.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "messages/row_batch.hpp"
#include "messages/schema.hpp"

namespace weir::ops::expr {

enum class op : uint8_t {
  literal, // lit: one row
  field,   // field: the index in the input schema
  // unary
  neg,
  not_,
  // binary; operands of one type, but for timestamp ± int64
  add,
  sub,
  mul,
  div,
  mod,
  cat, // ||
  eq,
  ne,
  lt,
  le,
  gt,
  ge,
  and_,
  or_,
  // functions
  lower,
  upper,
  length,
  trim,
  substr,
  contains,
  starts_with,
  ends_with,
  concat,
  abs,
  to_int,
  to_double, // also the promotion of int64 to double the typing inserts
  to_string,
  if_,
  is_null,
  coalesce,
};

struct node {
  op kind = op::literal;
  field_type type = field_type::int64;
  bool nullable = false;
  /// A null literal whose type its context has not fixed yet (typing only).
  bool untyped = false;
  /// The source text [begin, end) and where an error about it points.
  uint32_t begin = 0;
  uint32_t end = 0;
  uint32_t pos = 0;
  /// Height of the tree below and including this node.
  uint32_t depth = 1;
  /// Whether evaluating it may fail (overflow, division by zero) here or
  /// below: only then do and/or mask the rows of their right side.
  bool can_fail = false;
  size_t field = 0;
  column lit;
  std::vector<std::unique_ptr<node>> args;
};

struct compiled_expr {
  std::unique_ptr<node> root;
  /// The text compiled (a whole select list for its items) and the part of
  /// it that is this expression, for error messages.
  std::shared_ptr<const std::string> source;
  uint32_t begin = 0;
  uint32_t end = 0;

  std::string_view text() const {
    return std::string_view{*source}.substr(begin, end - begin);
  }
  std::string_view text(const node& n) const {
    return std::string_view{*source}.substr(n.begin, n.end - n.begin);
  }
};

/// ASCII white space (what trim() removes and the grammar skips).
inline bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
         || c == '\v';
}

/// `s` on one line (white space runs as one space), at most 80 characters.
std::string excerpt(std::string_view s);

} // namespace weir::ops::expr
