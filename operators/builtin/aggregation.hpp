#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
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

/// The key fields' indices of a keyed operator `op`'s input; nothing (and
/// `problem` says why) for a source, an input that is not hash partitioned,
/// or a key field the input lacks.
std::optional<std::vector<size_t>> keyed_input(const std::string& op,
                                               const schema_query& q,
                                               std::string& problem);

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

  /// Folds aggregate `b` into `a` (two session windows becoming one).
  /// Throws operator_error on int64 overflow, naming `key`.
  void merge(aggregate& a, const aggregate& b, std::string_view key) const;

  /// Appends the aggregate of `a` to the last column of `out`.
  void emit(const aggregate& a, row_batch& out) const;

private:
  const aggregation_plan* plan_;
};

/// Per-key aggregates held in memory: the combiner the runtime runs before
/// a hash exchange (the aggregation operators keep theirs in keyed state).
/// Integer keys are hashed as integers, string keys as their bytes: no
/// formatting on the hot path. Not thread-safe.
static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "short_key lays its bytes out as little-endian words");

/// A key of at most 15 bytes, held inline: compared and hashed as two
/// words, without a call (string keys of hot paths are short: words, ids,
/// key_mod's digits). Its last byte is the length; unused bytes are 0.
class short_key {
public:
  static constexpr size_t max_size = 15;

  /// `s` must be at most max_size bytes. The words are built in registers
  /// from whole loads (overlapping where the length is odd): bytes copied
  /// one by one and then read as words would stall the load.
  explicit short_key(std::string_view s) {
    auto n = s.size();
    auto p = s.data();
    uint64_t lo = 0;
    uint64_t hi = 0;
    if (n >= 8) {
      lo = load<uint64_t>(p);
      if (n > 8)
        hi = load<uint64_t>(p + n - 8) >> ((16 - n) * 8);
    } else if (n >= 4) {
      lo = load<uint32_t>(p)
           | (static_cast<uint64_t>(load<uint32_t>(p + n - 4)) << ((n - 4) * 8));
    } else if (n > 0) {
      lo = static_cast<uint64_t>(byte(p[0]))
           | (static_cast<uint64_t>(byte(p[n / 2])) << (n / 2 * 8))
           | (static_cast<uint64_t>(byte(p[n - 1])) << ((n - 1) * 8));
    }
    words_[0] = lo;
    words_[1] = hi | (static_cast<uint64_t>(n) << 56);
  }

  std::string_view view() const {
    return {reinterpret_cast<const char*>(words_), size()};
  }
  size_t size() const {
    return reinterpret_cast<const unsigned char*>(words_)[15];
  }
  bool operator==(const short_key& other) const {
    return words_[0] == other.words_[0] && words_[1] == other.words_[1];
  }
  /// Both words multiplied and folded: keyed_sum.json's 100 M rows take
  /// 640 ms with it, 840 ms with absl's hash of the bytes.
  struct hash {
    size_t operator()(const short_key& k) const {
      auto mix = [](uint64_t x, uint64_t m) {
        auto p = static_cast<unsigned __int128>(x) * m;
        return static_cast<uint64_t>(p) ^ static_cast<uint64_t>(p >> 64);
      };
      return mix(k.words_[0] ^ mix(k.words_[1], 0x9e3779b97f4a7c15),
                 0xc2b2ae3d27d4eb4f);
    }
  };

private:
  template <class T>
  static T load(const char* p) {
    T x;
    std::memcpy(&x, p, sizeof x);
    return x;
  }
  static unsigned char byte(char c) { return static_cast<unsigned char>(c); }

  uint64_t words_[2] = {0, 0};
};

class keyed_aggregation {
public:
  keyed_aggregation(aggregation_kind kind, const params& p,
                    const schema& input, const std::vector<size_t>& key);

  /// Folds every row of `b` (input rows, or partial aggregates when
  /// `partial`).
  void add(const row_batch& b, bool partial);

  /// Number of distinct keys held.
  size_t size() const {
    return ints_.size() + shorts_.size() + bytes_.size();
  }

  /// Appends one row per key (in no particular order) to `out`, whose
  /// columns are the output schema's, and clears.
  void drain(row_batch& out);

  /// The rows drain() appends.
  const schema& output() const { return plan_.output; }

private:
  /// The hot path: one integer or string key, count or an int64 field
  /// without nulls. False when the rows need the general path.
  bool add_fast(const row_batch& b, bool partial, const key_codec& keys);

  /// The aggregate of encoded key `k` (created empty): short keys in
  /// shorts_, longer ones in bytes_, so that a key has one place.
  aggregate& of_key(std::string_view k) {
    if (k.size() <= short_key::max_size)
      return shorts_[short_key{k}];
    auto i = bytes_.find(absl::string_view{k.data(), k.size()});
    if (i == bytes_.end())
      i = bytes_.emplace(std::string{k}, aggregate{}).first;
    return i->second;
  }

  aggregation_plan plan_;
  aggregate_folder folder_;
  key_codec keys_;
  /// Output rows' key codec (their key fields come first).
  key_codec out_keys_;
  absl::flat_hash_map<int64_t, aggregate> ints_;
  absl::flat_hash_map<short_key, aggregate, short_key::hash> shorts_;
  absl::flat_hash_map<std::string, aggregate> bytes_;
  std::string scratch_;
};

} // namespace weir::ops
