#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace weir {

/// Event time is milliseconds since 1970. No watermark yet: the lowest
/// value; the end of the input: the highest (every window fires).
constexpr int64_t no_watermark = std::numeric_limits<int64_t>::min();
constexpr int64_t end_watermark = std::numeric_limits<int64_t>::max();

/// A watermark as it travels on a channel (Flink's Watermark and
/// WatermarkStatus in one): no row at or below `time` should follow on the
/// channel, or, when `idle`, the channel has nothing for now and its
/// consumer leaves it out of its minimum until a watermark without the flag
/// comes.
struct watermark_mark {
  int64_t time = no_watermark;
  bool idle = false;
};

/// What a subtask's input watermark did after an event of one channel.
struct valve_change {
  /// The input watermark advanced to this.
  std::optional<int64_t> advanced;
  /// Every open channel is idle now (true), or one became active again
  /// (false): the subtask's own outputs say so downstream.
  std::optional<bool> idle;
};

/// A subtask's input watermark (Flink's StatusWatermarkValve): the minimum
/// of its channels' watermarks, leaving out idle channels and ended ones.
/// It never goes back: a channel that comes back from idle below the
/// current watermark holds nothing back until it has caught up (Flink's
/// aligned channels). Plain class.
class watermark_valve {
public:
  explicit watermark_valve(size_t channels);

  /// Channel `c` sent `m`.
  valve_change on_mark(int32_t c, const watermark_mark& m);
  /// Channel `c` ended: it no longer holds the minimum back (all ended:
  /// the watermark is end_watermark).
  valve_change on_end(int32_t c);

  int64_t current() const { return current_; }
  /// Every open channel is idle.
  bool idle() const { return idle_; }

private:
  struct channel {
    int64_t time = no_watermark;
    bool idle = false;
    bool ended = false;
    /// Its watermark is not below the valve's: it counts in the minimum.
    bool aligned = true;
  };

  valve_change update();

  std::vector<channel> channels_;
  int64_t current_ = no_watermark;
  bool idle_ = false;
};

} // namespace weir
