#include "messages/key_groups.hpp"

#include <algorithm>

namespace weir {

int32_t default_max_parallelism(int32_t p) {
  int64_t want = static_cast<int64_t>(p) + p / 2;
  int64_t pow2 = 1;
  while (pow2 < want)
    pow2 <<= 1;
  return static_cast<int32_t>(std::clamp<int64_t>(pow2, 128, 32768));
}

key_group_range key_group_range_of(int32_t index, int32_t parallelism,
                                   int32_t max_parallelism) {
  // Flink's computeKeyGroupRangeForOperatorIndex: the inverse of
  // subtask_of_key_group.
  auto i = static_cast<int64_t>(index);
  auto first = (i * max_parallelism + parallelism - 1) / parallelism;
  auto last = ((i + 1) * max_parallelism - 1) / parallelism;
  return {static_cast<int32_t>(first), static_cast<int32_t>(last)};
}

} // namespace weir
