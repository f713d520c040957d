#pragma once

// Key groups (Flink's KeyGroupRangeAssignment): keyed state is split into
// a vertex's max parallelism of key groups, the unit that moves when the
// vertex runs at another parallelism. A key's group is its hash modulo
// the max parallelism; subtask i of n owns a contiguous range of groups.
// docs/state.md § Key groups.

#include <cstdint>

namespace weir {

/// Flink's default max parallelism of a vertex of parallelism `p`: 1.5 ×
/// p rounded up to a power of two, at least 128, at most 32768.
int32_t default_max_parallelism(int32_t p);

/// The key group of a key whose hash is `hash` (ops::key_hash, the hash
/// that hash partitioning computes of a row's key fields).
inline int32_t key_group_of_hash(uint64_t hash, int32_t max_parallelism) {
  return static_cast<int32_t>(hash % static_cast<uint64_t>(max_parallelism));
}

/// Groups [first, last] (inclusive) of one subtask.
struct key_group_range {
  int32_t first = 0;
  int32_t last = -1;

  bool contains(int32_t group) const {
    return group >= first && group <= last;
  }
  bool overlaps(const key_group_range& other) const {
    return first <= other.last && other.first <= last;
  }
  friend bool operator==(const key_group_range& a, const key_group_range& b) {
    return a.first == b.first && a.last == b.last;
  }
};

/// The groups subtask `index` of `parallelism` owns.
key_group_range key_group_range_of(int32_t index, int32_t parallelism,
                                   int32_t max_parallelism);

/// The subtask of `parallelism` that owns `group`.
inline int32_t subtask_of_key_group(int32_t group, int32_t parallelism,
                                    int32_t max_parallelism) {
  return static_cast<int32_t>(static_cast<int64_t>(group) * parallelism
                              / max_parallelism);
}

} // namespace weir
