#pragma once

#include <cstddef>
#include <cstdint>

namespace weir {

/// Tuning of the data plane (docs/architecture.md § Data plane).
struct exchange_options {
  /// Credits a producer starts each channel with (its buffer per output
  /// channel); it announces a backlog for the consumer to grant more
  /// (input_credits).
  int32_t initial_credit = 1;
  /// Credits each input channel gets for good once its producer has data
  /// (taskmanager.network.memory.buffers-per-channel, Flink's exclusive
  /// buffers)...
  int32_t exclusive_per_channel = 2;
  /// ...unless the gate has so many channels that they would exceed this
  /// (taskmanager.network.memory.max-exclusive-buffers-per-gate): then
  /// all of its credits float.
  int32_t max_exclusive_per_gate = 64;
  /// Credits each input gate lends to channels with a backlog
  /// (taskmanager.network.memory.floating-buffers-per-gate).
  int32_t floating_per_gate = 8;
  /// A batch is sent once it holds this many bytes (approximate)...
  size_t batch_bytes = 128 * 1024;
  /// ...or this many records.
  size_t batch_records = 2048;
  /// A combiner flushes once it holds this many distinct keys.
  size_t combiner_keys = 16 * 1024;

  /// The exclusive credits of each channel of a gate with `channels`.
  int32_t exclusive_for(int32_t channels) const {
    return int64_t{channels} * exclusive_per_channel <= max_exclusive_per_gate
             ? exclusive_per_channel
             : 0;
  }
};

} // namespace weir
