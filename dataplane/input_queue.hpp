#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <variant>
#include <vector>

#include "dataplane/watermark_valve.hpp"
#include "messages/barrier.hpp"
#include "messages/record.hpp"

namespace weir {

/// The end of an input channel, after all its numbered events.
struct channel_end {};

/// One input event of a subtask: a batch, a checkpoint barrier, a
/// watermark, or the end of a channel.
struct input_event {
  int32_t channel = 0;
  int32_t port = 0; ///< the producer's output that sent it
  std::variant<row_batch, checkpoint_barrier, channel_end, watermark_mark>
    body;
  /// Its credit went back while it waited for an alignment (input_credits).
  bool credit_returned = false;
};

/// A credit owed for a processed batch of `channel` (whose producer sent it
/// from its output `port`).
struct owed_credit {
  int32_t channel = 0;
  int32_t port = 0;
  int32_t n = 1;
};

/// A subtask's input side (plain class): events in channel order, the
/// channels still open, and credits withheld while the subtask's own outputs
/// are backlogged. Withholding credits is what passes backpressure upstream.
///
/// Batches and barriers carry a number per channel, and an end carries how
/// many of them came before it: events are queued in that order even when a
/// later message overtook an earlier one on the network (CAF gives no order
/// across paths).
class input_queue {
public:
  explicit input_queue(size_t channels);

  /// Event number `seq` (a batch or a barrier) of `ev.channel` arrived; it
  /// is queued once all earlier events of its channel are. Duplicates and
  /// unknown channels are dropped.
  void push(int64_t seq, input_event ev);

  /// The producer of `channel` sent `events` numbered events in all; the end
  /// is queued after the last of them.
  void push_end(int32_t channel, int64_t events);

  bool empty() const { return events_.empty(); }

  /// Events queued or waiting for an earlier one of their channel.
  size_t queued() const;

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
  struct channel_order {
    int64_t next = 0;                      ///< the event expected next
    std::map<int64_t, input_event> early;  ///< events that overtook others
    std::optional<int64_t> total;          ///< events before the end
    bool end_queued = false;
  };

  void queue_end_when_complete(int32_t channel);

  std::vector<channel_order> order_;
  std::deque<input_event> events_;
  std::vector<bool> ended_;
  size_t open_;
  std::vector<owed_credit> owed_;
};

} // namespace weir
