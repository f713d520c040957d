#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "messages/record.hpp"

namespace weir::ops {

class state_writer;
class state_reader;

/// Which keyed aggregation.
enum class aggregation_kind {
  /// Number of records per key.
  count,
  /// Sum of `num` per key (wrapping on overflow).
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

/// Per-key aggregates of records: the state of the count/sum/min/max
/// operators, and the combiner the runtime runs before a hash exchange.
/// Output records are integer records key=key, num=aggregate, timestamp =
/// the largest timestamp seen for the key. Not thread-safe.
class keyed_aggregation {
public:
  /// With `track_updates`, remembers which keys changed for emit_updates().
  explicit keyed_aggregation(aggregation_kind kind, bool track_updates = false);

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

  /// Appends the current aggregate of every key changed since the last call
  /// (in the order they were first changed); needs `track_updates`.
  void emit_updates(std::vector<record>& out);

  /// Writes every key's aggregate (a checkpoint of this keyed state).
  void snapshot(state_writer& w) const;

  /// Replaces the table with what snapshot() wrote.
  void restore(state_reader& r);

  /// What this table aggregates.
  aggregation_kind kind() const { return kind_; }

private:
  struct entry {
    int64_t value = 0;
    int64_t timestamp = 0;
    uint64_t epoch = 0; ///< emit_updates() round of the last change
  };
  // An open-addressing table: no node per key, which matters at tens of
  // millions of updates per second.
  using table = absl::flat_hash_map<std::string, entry>;

  aggregation_kind kind_;
  bool track_updates_;
  uint64_t epoch_ = 1;
  table table_;
  std::vector<std::string> touched_; ///< keys changed this round, in order
};

} // namespace weir::ops
