#pragma once

#include <cstdint>

namespace weir::ops {

/// Which clock a timer follows (Flink's TimeDomain).
enum class time_domain : int8_t {
  /// The operator's input watermark (docs/event-time.md § Watermarks).
  event_time = 0,
  /// The machine's clock, in ms since 1970.
  processing_time = 1,
};

/// A keyed operator's timers (Flink's TimerService), from
/// operator_context::timers. A timer belongs to the keyed state's current
/// key (keyed_backend::set_current_key) and is keyed state itself: it is in
/// checkpoints and savepoints, on the heap or in RocksDB with the rest.
/// When it is due the runtime calls transform::on_timer with that key
/// current again. One timer per key and time: registering it twice is
/// registering it once. Called from the operator's thread only.
class timer_service {
public:
  virtual ~timer_service() = default;
  /// The operator's input watermark so far (the lowest int64 before any).
  virtual int64_t current_watermark() const = 0;
  /// Now, by the machine's clock (ms since 1970).
  virtual int64_t current_processing_time() const = 0;
  /// A timer for the current key, due once the watermark reaches `time`
  /// (at once, at the next watermark, if it has already).
  virtual void register_event_time_timer(int64_t time) = 0;
  /// A timer for the current key, due once the clock reaches `time`.
  virtual void register_processing_time_timer(int64_t time) = 0;
  /// Removes the current key's timer at `time`, if it has one.
  virtual void delete_event_time_timer(int64_t time) = 0;
  virtual void delete_processing_time_timer(int64_t time) = 0;
};

} // namespace weir::ops
