#pragma once

#include <cstdint>
#include <string>

#include "operators/operator.hpp"
#include "operators/registry.hpp"

namespace weir::ops {

/// The bounds of an interval join (Flink's `between(lower, upper)`): a row
/// of the left input at time t joins each row of the right input with the
/// same key at a time in [t + lower, t + upper].
struct join_bounds {
  int64_t lower_ms = 0;
  int64_t upper_ms = 0;
};

/// The bounds from parameters `lower` and `upper` (signed durations, "-5
/// s"); or a problem naming the parameter.
struct parsed_join_bounds {
  join_bounds bounds;
  std::string problem;
};
parsed_join_bounds parse_join_bounds(const params& p);

/// `interval_join` (two inputs, both hash partitioned by keys of the same
/// types): joins rows of its `left` and `right` inputs (named by their
/// vertices) whose keys are equal and whose event times are within the
/// bounds; emits the left row's fields, then the right row's other fields
/// (docs/event-time.md § Interval join).
operator_factory interval_join_factory();

} // namespace weir::ops
