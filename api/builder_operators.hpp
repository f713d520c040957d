#pragma once

// The in-process operators behind the job builder's lambdas that need more
// than a map (docs/cpp-api.md): a key selector, a rolling reduce and the
// co-map of two connected streams. Not installed: the builder's public
// calls are the API.

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "messages/record.hpp"
#include "operators/registry.hpp"

namespace weir::api_ops {

/// Sets each record's key to `selector(record)` (Flink's KeySelector); its
/// output is its input keyed: (key: string, value) of the input's value.
ops::operator_factory
key_selector(std::function<std::string(const record&)> selector);

/// Flink's rolling reduce on a keyed stream: each record is folded into its
/// key's last result (in keyed state, checkpointed), which it emits.
ops::operator_factory
rolling_reduce(std::function<record(record&&, record&&)> f);

/// Two connected streams, each record mapped by the function of its input
/// (CoFlatMapFunction): `first` for the first input, `second` for the
/// other; `output` the schema both emit (default: the first input's).
using co_function = std::function<void(record&&, std::vector<record>&)>;
ops::operator_factory co_flat_map(co_function first, co_function second,
                                  std::optional<schema> output);

} // namespace weir::api_ops
