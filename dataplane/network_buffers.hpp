#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "dataplane/exchange_options.hpp"
#include "messages/deployment.hpp"
#include "messages/ids.hpp"

namespace weir {

/// A TaskExecutor's network-buffer budget (Flink's network memory):
/// taskmanager.memory.network.max in buffers of `buffer_bytes`.
struct network_buffer_options {
  /// Flink's default memory segment size.
  static constexpr int64_t buffer_bytes = 32 * 1024;
  /// taskmanager.memory.network.max, in bytes.
  int64_t max_bytes = int64_t{1} << 30;
  /// taskmanager.network.memory.buffers-per-channel: exclusive buffers
  /// (credits) of each input channel; each output channel needs one.
  int32_t buffers_per_channel = 2;
  /// taskmanager.network.memory.floating-buffers-per-gate: buffers each
  /// input gate lends to channels with a backlog.
  int32_t floating_per_gate = 8;
  /// taskmanager.network.memory.max-exclusive-buffers-per-gate: a gate
  /// whose channels would need more exclusive buffers than this has none;
  /// all of its buffers float (input_credits).
  int32_t max_exclusive_per_gate = 64;

  /// What the subtasks' input gates grant, as `base` otherwise.
  exchange_options credits(exchange_options base) const {
    base.exclusive_per_channel = buffers_per_channel;
    base.floating_per_gate = floating_per_gate;
    base.max_exclusive_per_gate = max_exclusive_per_gate;
    return base;
  }

  /// The budget in buffers.
  int64_t total_buffers() const { return max_bytes / buffer_bytes; }
};

/// The buffers subtask `d` needs: per input gate, `buffers_per_channel`
/// per channel (none when that would pass `max_exclusive_per_gate`) and
/// `floating_per_gate`; one per output channel (a forward output has one
/// channel, any other as many as the consumer has subtasks).
int64_t buffers_needed(const task_deployment& d,
                       const network_buffer_options& opts);

/// A TaskExecutor's network buffers, reserved per slot allocation before its
/// subtasks are spawned and given back with the slot. Plain class.
class network_buffer_pool {
public:
  explicit network_buffer_pool(int64_t total) : total_(total) {}

  int64_t total() const { return total_; }
  int64_t available() const { return total_ - reserved_; }

  /// Reserves `need` more buffers for `alloc`; false (nothing reserved)
  /// when fewer are available.
  bool reserve(const allocation_id& alloc, int64_t need);

  /// The slot `alloc` was given back: its buffers are available again.
  void release(const allocation_id& alloc);

private:
  int64_t total_;
  int64_t reserved_ = 0;
  std::map<allocation_id, int64_t> by_alloc_;
};

} // namespace weir
