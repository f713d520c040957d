#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "operators/operator.hpp"

namespace weir::ops {

/// What values a parameter accepts.
enum class param_kind {
  /// Any text.
  text,
  /// A decimal int64.
  integer,
  /// A decimal int64 greater than zero.
  positive,
  /// A decimal int64 of at least zero.
  non_negative,
  /// A decimal int64 of at least zero, or -1 for "no limit".
  limit,
  /// A finite decimal number (a double): "0.5", "-3", "1e-3".
  number,
  /// "true" or "false".
  boolean,
};

/// One parameter an operator (or a named function) accepts.
struct param_spec {
  std::string name;
  param_kind kind = param_kind::text;
  bool required = false;
};

/// Parses a whole string as a decimal int64 (no spaces, no '+').
std::optional<int64_t> parse_int64(std::string_view text);

/// Parses a whole string as a finite double (no spaces).
std::optional<double> parse_double(std::string_view text);

/// Parses "true" or "false".
std::optional<bool> parse_bool(std::string_view text);

/// The names sorted and joined with ", " ("none" when there are none).
std::string join_sorted(std::vector<std::string> names);

/// Checks `p` against `specs`: unknown parameters first (naming `op` and the
/// known ones, sorted), then missing required ones, then malformed values.
/// Returns "" or one line "parameter '<name>': <problem>".
std::string check_params(const std::string& op, const params& p,
                         const std::vector<param_spec>& specs);

/// Throws operator_error with `problem` unless it is empty.
void throw_if(const std::string& problem);

/// Throws operator_error "<op>: int64 overflow at key '<key>'" (keys longer
/// than 64 bytes cut, with "..."), or "... at value <value>" for a record
/// without a key: built-in arithmetic fails the job instead of wrapping.
[[noreturn]] void throw_overflow(const std::string& op, std::string_view key,
                                 int64_t value);

/// The integer parameter `name`, or `fallback` when absent. Throws
/// operator_error when present but not an integer.
int64_t int_param(const params& p, const std::string& name, int64_t fallback);

/// The text parameter `name`, or `fallback` when absent.
std::string text_param(const params& p, const std::string& name,
                       std::string fallback = {});

} // namespace weir::ops
