#pragma once

#include <cstddef>
#include <cstdint>

namespace weir {

/// Tuning of the data plane (docs/architecture.md § Data plane).
struct exchange_options {
  /// Batches a consumer grants each input channel up front (Flink's
  /// exclusive buffers per channel).
  int32_t initial_credit = 4;
  /// A batch is sent once it holds this many bytes (approximate)...
  size_t batch_bytes = 128 * 1024;
  /// ...or this many records.
  size_t batch_records = 2048;
  /// A combiner flushes once it holds this many distinct keys.
  size_t combiner_keys = 16 * 1024;
};

} // namespace weir
