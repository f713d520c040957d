#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "messages/record.hpp"

namespace weir::ops {

/// Which keyed aggregation.
enum class aggregation_kind {
  /// Number of records per key.
  count,
  /// Sum of `num` per key (the job fails on int64 overflow).
  sum,
  /// Smallest `num` per key.
  min,
  /// Largest `num` per key.
  max,
};

/// "count", "sum", "min" or "max".
std::string to_string(aggregation_kind kind);

/// The kind named by an operator name, or nullopt.
std::optional<aggregation_kind> parse_aggregation_kind(const std::string& name);

/// A key's aggregate: its value and the largest timestamp folded into it.
struct aggregate {
  int64_t value = 0;
  int64_t timestamp = 0;
};

/// Folds `r` into `a` (`fresh`: `a` holds nothing yet). Count adds 1, or
/// `num` when `partial` (a combiner's partial count); sum adds `num`; min
/// and max keep the extreme. A count or sum beyond int64 throws
/// operator_error ("sum: int64 overflow at key 'x'") and leaves `a` as it
/// was.
void fold(aggregation_kind kind, aggregate& a, bool fresh, const record& r,
          bool partial);

/// Per-key aggregates of records held in memory: the combiner the runtime
/// runs before a hash exchange (the count/sum/min/max operators keep theirs
/// in keyed state). Output records are integer records key=key,
/// num=aggregate, timestamp = the largest timestamp seen for the key. Not
/// thread-safe.
class keyed_aggregation {
public:
  explicit keyed_aggregation(aggregation_kind kind);

  /// Folds `r` (its key is moved from) into its key's aggregate. When
  /// `partial`, `r` is a partial aggregate: count adds `num` instead of 1
  /// (sum, min and max treat partial and raw records alike).
  void add(record&& r, bool partial);

  /// Number of distinct keys held.
  size_t size() const { return table_.size(); }

  /// Appends one record per key (in no particular order) and clears.
  void drain(std::vector<record>& out);

  /// Appends one record per key, sorted by key, and clears.
  void drain_sorted(std::vector<record>& out);

  /// What this table aggregates.
  aggregation_kind kind() const { return kind_; }

private:

  // An open-addressing table: no node per key, which matters at tens of
  // millions of updates per second.
  using table = absl::flat_hash_map<std::string, aggregate>;

  aggregation_kind kind_;
  table table_;
};

} // namespace weir::ops
