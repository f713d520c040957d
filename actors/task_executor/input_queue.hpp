#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include <caf/actor_control_block.hpp>

#include "messages/record.hpp"

namespace weir {

/// One input event of a subtask: a batch, or the end of a channel.
struct input_event {
  int32_t channel = 0;
  int32_t port = 0;                ///< the producer's output that sent it
  caf::strong_actor_ptr producer;  ///< where the batch's credit goes back
  record_batch batch;
  bool end = false;
};

/// A credit owed to a producer for a processed batch.
struct owed_credit {
  caf::strong_actor_ptr producer;
  int32_t port = 0;
};

/// A subtask's input side (plain class): events in arrival order, the
/// channels still open, and credits withheld while the subtask's own outputs
/// are backlogged. Withholding credits is what passes backpressure upstream.
class input_queue {
public:
  explicit input_queue(size_t channels);

  void push(input_event ev) { events_.push_back(std::move(ev)); }
  bool empty() const { return events_.empty(); }

  /// The oldest event (the queue must not be empty).
  input_event pop();

  /// Marks `channel` ended. Returns true when that closed the last open
  /// channel; repeated or unknown channels are ignored.
  bool end_channel(int32_t channel);

  size_t open_channels() const { return open_; }

  /// Keeps a credit until the outputs drain.
  void withhold(owed_credit c) { owed_.push_back(std::move(c)); }

  /// Returns and forgets every withheld credit.
  std::vector<owed_credit> release();

private:
  std::deque<input_event> events_;
  std::vector<bool> ended_;
  size_t open_;
  std::vector<owed_credit> owed_;
};

} // namespace weir
