#pragma once

#include <functional>
#include <optional>
#include <string>

#include "messages/record.hpp"
#include "messages/schema.hpp"
#include "operators/registry.hpp"

namespace weir::ops {

/// A user's own incremental aggregation of a window's records (Flink's
/// AggregateFunction): one accumulator per key and window, kept as bytes
/// in keyed state (on the heap or in RocksDB, in checkpoints and
/// savepoints), never the records themselves. Called from the operator's
/// thread only.
struct window_aggregate_function {
  /// The accumulator of a window without records.
  std::function<std::string()> create;
  /// Adds record `r` (the window's input as a record: key and value, or
  /// the row's text for other schemas) to `acc`.
  std::function<void(std::string& acc, const record& r)> add;
  /// Adds accumulator `other` to `acc`: session windows that merge need
  /// it (unset: session windows are refused).
  std::function<void(std::string& acc, const std::string& other)> merge;
  /// The window's result: its value (`num`, or `text` when value_type is
  /// string) becomes the output row's `value`; its key is not used.
  std::function<record(const std::string& acc)> result;
  /// The type of `value` in the output: int64 or string (unset: the
  /// input's `value` type, string for inputs without one).
  std::optional<field_type> value_type;
};

/// Flink's ReduceFunction on records: a window's records folded pairwise
/// by `f` (first the earlier, then the later); its result is the last
/// record's value, of the input's value type.
window_aggregate_function
reduce_function(std::function<record(record&&, record&&)> f);

/// An operator `name` that cuts its keyed input into windows as the
/// `window` operator does (its parameters but `aggregate`, `field` and
/// `as`; docs/event-time.md § Windows) and aggregates each with `f`:
/// rows of the key fields, window_start, window_end and `value`. Register
/// it from a user library (registrar::add_operator); the C++ builder's
/// windowed_stream::aggregate and reduce use it in-process.
operator_factory window_function_operator(std::string name,
                                          window_aggregate_function f);

} // namespace weir::ops
