#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "operators/operator.hpp"
#include "operators/registry.hpp"

namespace weir::ops {

/// Which windows a row of a keyed stream falls into (Flink's window
/// assigners; docs/event-time.md § Windows). Event time, in ms.
struct window_spec {
  enum class kind : uint8_t { tumbling, sliding, session };
  kind type = kind::tumbling;
  /// Tumbling and sliding windows' length.
  int64_t size_ms = 0;
  /// Sliding: how far apart windows start (tumbling: size_ms).
  int64_t slide_ms = 0;
  /// Windows start at offset + k * slide (Flink's offset; 0: at the epoch).
  int64_t offset_ms = 0;
  /// How long after it fired a window still takes late rows, each one
  /// firing it again with the updated aggregate (Flink's allowedLateness).
  int64_t allowed_lateness_ms = 0;
  /// Session windows: a key's rows less than this apart are one session,
  /// which ends this long after its last row (Flink's
  /// EventTimeSessionWindows.withGap).
  int64_t gap_ms = 0;
  /// Processing time: rows fall into windows by the clock when they
  /// arrive, and windows fire when the clock passes their end (Flink's
  /// TumblingProcessingTimeWindows and its kin).
  bool processing_time = false;
};

/// The spec from a window operator's parameters `type`, `size`, `slide`,
/// `gap`, `offset`, `allowed-lateness`, `time`; or a problem naming the
/// parameter ("parameter 'size': ...").
struct parsed_window_spec {
  window_spec spec;
  std::string problem;
};
parsed_window_spec parse_window_spec(const params& p);

/// Checks a window vertex's parameters (`op` names its operator in
/// problems): those of the spec, and with `builtin_aggregate` those of the
/// built-in aggregations (`aggregate`, `field`, `as`), which are unknown
/// otherwise.
std::string check_window_params(const std::string& op, const params& p,
                                bool builtin_aggregate);

/// A window's side outputs: "late" (its input's rows) in event time.
std::map<std::string, schema> window_side_outputs(const params& p,
                                                  const schema_query& q);

/// The start of every window that holds event time `t`, latest first:
/// one for tumbling windows, size / slide for sliding ones. A window is
/// [start, start + size_ms).
void assign_windows(const window_spec& w, int64_t t,
                    std::vector<int64_t>& starts);

/// `window` (keyed transform): aggregates each key's rows per window and
/// emits one row per key and window when the watermark passes its end.
operator_factory window_factory();

} // namespace weir::ops
