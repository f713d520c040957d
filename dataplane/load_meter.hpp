#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>

#include "messages/job_result.hpp"

namespace weir {

/// A subtask's load (task_load) as a plain class. Its wall time since
/// start() is split in three: busy (inside a handler: processing input,
/// producing, flushing), backpressured (between handlers while output waits
/// for credit) and idle (between handlers otherwise), so that the three
/// always sum to the time since start(). It reads the clock once when a
/// handler begins, once when it ends and once per sample; bytes are counted
/// per batch. Not thread-safe: the subtask's thread alone calls it.
class load_meter {
public:
  using clock = std::chrono::steady_clock;
  using clock_fn = std::function<clock::time_point()>;

  explicit load_meter(clock_fn now = clock::now);

  /// The subtask runs: time counts from here, idle until a handler begins.
  void start();
  bool started() const { return started_; }

  /// A handler begins (nested calls count once); before start() a no-op.
  void enter();
  /// The handler ends; until the next one begins the time is backpressured
  /// when `output_waits` (batches wait for credit), else idle.
  void leave(bool output_waits);

  void batch_in(size_t bytes) { bytes_in_ += static_cast<int64_t>(bytes); }
  void batch_out(size_t bytes) { bytes_out_ += static_cast<int64_t>(bytes); }

  /// Whether `interval` passed between the previous sample and the last
  /// clock reading (no clock read of its own: cheap enough per batch).
  bool sample_due(clock::duration interval) const {
    return started_ && mark_ - last_sample_ >= interval;
  }

  /// Totals up to now; rates over the window since the previous sample (or
  /// start()); queues as given. `records_in/out`: the chain's totals. A
  /// window of zero length keeps the previous rates.
  task_load sample(int64_t records_in, int64_t records_out,
                   int32_t input_queue, int32_t output_queue);

private:
  enum class mode : uint8_t { idle, busy, backpressured };

  /// Accounts the time since the last mark to the current mode, then
  /// continues in `next`.
  void switch_to(clock::time_point now, mode next);

  clock_fn now_;
  bool started_ = false;
  int depth_ = 0;
  mode mode_ = mode::idle;
  clock::time_point mark_{};
  /// Totals in the clock's ticks, by mode.
  clock::duration spent_[3] = {};
  int64_t bytes_in_ = 0;
  int64_t bytes_out_ = 0;
  /// The previous sample, for the window's rates.
  clock::time_point last_sample_{};
  task_load last_;
  int64_t last_records_in_ = 0;
  int64_t last_records_out_ = 0;
  clock::duration last_spent_[3] = {};
};

} // namespace weir
