#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <variant>
#include <vector>

#include "dataplane/exchange_options.hpp"
#include "dataplane/watermark_valve.hpp"
#include "messages/barrier.hpp"
#include "messages/deployment.hpp"
#include "messages/row_batch.hpp"

namespace weir::ops {
class keyed_aggregation;
} // namespace weir::ops

namespace weir {

/// One output of a subtask: partitions records over the consumers, cuts them
/// into batches and keeps each batch until the consumer has granted credit
/// for it (credit-based flow control). Plain class; the subtask actor sends
/// what `drain` hands it.
class output_gate {
public:
  /// `rows`: the schema of what the producer emits into the gate.
  output_gate(const output_desc& desc, int32_t producer_index,
              const exchange_options& opts, const schema& rows);

  /// The side output of the chain's last operator this gate takes (empty:
  /// its main output).
  const std::string& side_output() const { return desc_.output; }
  ~output_gate();

  output_gate(output_gate&&) noexcept;
  output_gate& operator=(output_gate&&) noexcept;

  /// Routes the rows of `rows` to the consumers' open batches (or into the
  /// combiner).
  void emit(const row_batch& rows);

  /// Closes every open batch (and drains the combiner) so it can be sent.
  void flush();

  /// Queues `barrier` to every consumer, after everything emitted before it
  /// (open batches and the combiner are flushed first). It takes a credit
  /// and a number in the channel's sequence, as a batch.
  void emit_barrier(const checkpoint_barrier& barrier);

  /// Queues `mark` to every consumer, after everything emitted before it
  /// (open batches are flushed first); a credit and a number, as a batch.
  /// A lane whose last waiting event is a watermark gets that one replaced:
  /// a backpressured consumer gets the newest watermark, not a queue.
  void emit_watermark(const watermark_mark& mark);

  /// The consumer granted `n` more batches.
  void add_credit(int32_t consumer, int32_t n);

  /// Hands every queued event that has credit, in order, to `on_batch(int32_t
  /// consumer, int32_t channel, int64_t seq, record_batch&&)`,
  /// `on_barrier(consumer, channel, seq, const checkpoint_barrier&)` or
  /// `on_watermark(consumer, channel, seq, const watermark_mark&)`; for
  /// a consumer whose events wait without credit, tells
  /// `on_backlog(consumer, channel, int32_t waiting)` once (again after
  /// the next credit), so that it grants some (input_credits).
  template <class OnBatch, class OnBarrier, class OnWatermark,
            class OnBacklog>
  void drain(OnBatch&& on_batch, OnBarrier&& on_barrier,
             OnWatermark&& on_watermark, OnBacklog&& on_backlog);

  /// Whether some consumer has closed batches waiting for credit.
  bool backlogged() const;

  /// Closed batches and barriers waiting for credit, over all consumers.
  int32_t waiting() const;

  /// Whether nothing is buffered: no open batch, no waiting batch.
  bool empty() const;

  /// Whether the combiner or an open batch holds records.
  bool has_open_data() const;

  /// The consumer subtasks this producer sends to (one for forward).
  const std::vector<int32_t>& targets() const { return targets_; }

  /// The input channel of a consumer that this producer's batches arrive on.
  int32_t channel() const { return channel_; }

  /// Whether records are pre-aggregated before they travel (a combiner),
  /// how many went into it, and how many partial aggregates came out and
  /// travelled: what the consumers read.
  bool combines() const { return combiner_ != nullptr; }
  int64_t rows_combined() const { return combined_in_; }
  int64_t partials_sent() const { return combined_out_; }

  /// How many batches went to `consumer` so far (the next one's number).
  int64_t sent(int32_t consumer) const {
    return lanes_[lane_index(consumer)].sent;
  }

private:
  struct lane {
    row_batch open;
    /// Closed batches, barriers and watermarks waiting for credit.
    /// A list, not a deque: an empty deque allocates ~600 bytes, and a
    /// hash exchange at -p 1024 has a million lanes.
    std::list<std::variant<row_batch, checkpoint_barrier, watermark_mark>>
      closed;
    int32_t credit = 0;
    int64_t sent = 0;
    /// The consumer was told of the events waiting without credit.
    bool announced = false;
  };

  size_t lane_index(int32_t consumer) const {
    return lanes_.size() == 1 ? 0 : static_cast<size_t>(consumer);
  }
  lane& lane_of(int32_t consumer) { return lanes_[lane_index(consumer)]; }

  /// Whether this gate has so many lanes that each opens its batch only
  /// when rows come for it: a hash exchange at -p 1024 has a million
  /// lanes, and an open batch's columns take ~300 bytes before any row.
  bool wide() const { return lanes_.size() * opts_.batch_bytes > (8u << 20); }
  /// Gives `l` an open batch of the sent schema, unless it has one.
  void open_lane(lane& l) {
    if (l.open.columns.empty())
      l.open.reset(sent_);
  }

  void route(const row_batch& rows);
  /// Closes `l`'s open batch when it is full; one that grew past the
  /// limits is cut into batches of batch_records rows or batch_bytes.
  void check_full(lane& l);
  void close(lane& l);
  void drain_combiner();

  output_desc desc_;
  exchange_options opts_;
  int32_t channel_ = 0;
  std::vector<int32_t> targets_;
  /// One per consumer subtask (index = subtask); forward: one.
  std::vector<lane> lanes_;
  size_t next_rebalance_ = 0;
  /// What travels: the producer's rows, or the combiner's partial
  /// aggregates.
  schema sent_;
  std::vector<size_t> key_;
  std::unique_ptr<ops::keyed_aggregation> combiner_;
  row_batch partials_;
  int64_t combined_in_ = 0;
  int64_t combined_out_ = 0;
  std::vector<uint64_t> hashes_;
  std::vector<uint32_t> lane_of_row_;
};

template <class OnBatch, class OnBarrier, class OnWatermark, class OnBacklog>
void output_gate::drain(OnBatch&& on_batch, OnBarrier&& on_barrier,
                        OnWatermark&& on_watermark, OnBacklog&& on_backlog) {
  for (auto t : targets_) {
    auto& l = lane_of(t);
    while (l.credit > 0 && !l.closed.empty()) {
      --l.credit;
      auto seq = l.sent++;
      auto& front = l.closed.front();
      if (auto* b = std::get_if<row_batch>(&front))
        on_batch(t, channel_, seq, std::move(*b));
      else if (auto* m = std::get_if<watermark_mark>(&front))
        on_watermark(t, channel_, seq, *m);
      else
        on_barrier(t, channel_, seq, std::get<checkpoint_barrier>(front));
      l.closed.pop_front();
    }
    if (l.credit == 0 && !l.closed.empty() && !l.announced) {
      l.announced = true;
      on_backlog(t, channel_, static_cast<int32_t>(l.closed.size()));
    }
  }
}

} // namespace weir
