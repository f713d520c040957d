#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "messages/row_batch.hpp"
#include "operators/key_codec.hpp"
#include "operators/operator.hpp"

namespace weir::ops {

/// Which keyed aggregation.
enum class aggregation_kind {
  /// Number of rows per key.
  count,
  /// Sum of the field per key (int64: the job fails on overflow).
  sum,
  /// Smallest value of the field per key.
  min,
  /// Largest value of the field per key.
  max,
  /// Mean of the field per key, as a double.
  avg,
};

/// "count", "sum", "min", "max" or "avg".
std::string to_string(aggregation_kind kind);

/// The kind named by an operator name, or nullopt.
std::optional<aggregation_kind> parse_aggregation_kind(const std::string& name);

/// What one keyed aggregation reads and writes, resolved against its input
/// schema: the key fields, the aggregated field and the output schema (the
/// key fields, then the aggregate). Parameters: `field` (default "value"
/// where the input has it; count takes none) and `as`, the aggregate's
/// name (default: the field's name; "count" for count, "value" on the
/// default schemas).
struct aggregation_plan {
  aggregation_kind kind = aggregation_kind::count;
  std::vector<size_t> key;
  /// The aggregated field's index in the input (count: none).
  std::optional<size_t> field;
  schema output;

  /// The aggregate's type (the output's last field).
  field_type value_type() const { return output.fields.back().type; }
};

/// The plan, or a problem naming the field and types ("field 'user' is
/// string: sum needs int64 or double").
struct planned_aggregation {
  aggregation_plan plan;
  std::string problem;
};
planned_aggregation plan_aggregation(aggregation_kind kind, const params& p,
                                     const schema& input,
                                     const std::vector<size_t>& key);

/// A key's aggregate: an int64 or double value, how many values went into
/// it, and the largest event time folded into it.
struct aggregate {
  int64_t i = 0;
  double d = 0;
  int64_t count = 0;
  int64_t timestamp = 0;
};

/// Folds rows into aggregates (plain logic shared by the combiner and the
/// aggregation operator). `partial`: rows are a combiner's output (the
/// plan's output schema), whose aggregate is their last field.
class aggregate_folder {
public:
  explicit aggregate_folder(const aggregation_plan& plan) : plan_(&plan) {}

  /// Folds row `row` of `b` into `a`. Throws operator_error on int64
  /// overflow ("sum: int64 overflow at key 'x'"), leaving `a` as it was.
  void fold(aggregate& a, const row_batch& b, size_t row, bool partial,
            const key_codec& keys) const;

  /// Appends the aggregate of `a` to the last column of `out`.
  void emit(const aggregate& a, row_batch& out) const;

private:
  const aggregation_plan* plan_;
};

/// Per-key aggregates held in memory: the combiner the runtime runs before
/// a hash exchange (the aggregation operators keep theirs in keyed state).
/// Integer keys are hashed as integers, string keys as their bytes: no
/// formatting on the hot path. Not thread-safe.
class keyed_aggregation {
public:
  keyed_aggregation(aggregation_kind kind, const params& p,
                    const schema& input, const std::vector<size_t>& key);

  /// Folds every row of `b` (input rows, or partial aggregates when
  /// `partial`).
  void add(const row_batch& b, bool partial);

  /// Number of distinct keys held.
  size_t size() const { return ints_.size() + bytes_.size(); }

  /// Appends one row per key (in no particular order) to `out`, whose
  /// columns are the output schema's, and clears.
  void drain(row_batch& out);

  /// The rows drain() appends.
  const schema& output() const { return plan_.output; }

private:
  /// The hot path: one integer or string key, count or an int64 field
  /// without nulls. False when the rows need the general path.
  bool add_fast(const row_batch& b, bool partial, const key_codec& keys);

  aggregation_plan plan_;
  aggregate_folder folder_;
  key_codec keys_;
  /// Output rows' key codec (their key fields come first).
  key_codec out_keys_;
  absl::flat_hash_map<int64_t, aggregate> ints_;
  absl::flat_hash_map<std::string, aggregate> bytes_;
  std::string scratch_;
};

} // namespace weir::ops
