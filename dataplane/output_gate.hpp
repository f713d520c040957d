#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <vector>

#include "dataplane/exchange_options.hpp"
#include "messages/deployment.hpp"
#include "messages/record.hpp"

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
  using send_fn = std::function<void(int32_t consumer, int32_t channel,
                                     int64_t seq, record_batch&& batch)>;

  output_gate(const output_desc& desc, int32_t producer_index,
              const exchange_options& opts);
  ~output_gate();

  output_gate(output_gate&&) noexcept;
  output_gate& operator=(output_gate&&) noexcept;

  /// Routes `records` (moved from) to the consumers' open batches.
  void emit(std::vector<record>& records);

  /// Closes every open batch (and drains the combiner) so it can be sent.
  void flush();

  /// Queues checkpoint `id`'s barrier (of state::snapshot_kind `kind`) to
  /// every consumer, after everything emitted before it (open batches and
  /// the combiner are flushed first).
  void emit_barrier(int64_t id, int8_t kind = 0);

  /// The consumer granted `n` more batches.
  void add_credit(int32_t consumer, int32_t n);

  /// Hands every closed batch that has credit to `send`.
  void drain(const send_fn& send);

  /// Whether some consumer has closed batches waiting for credit.
  bool backlogged() const;

  /// Whether nothing is buffered: no open batch, no waiting batch.
  bool empty() const;

  /// Whether the combiner or an open batch holds records.
  bool has_open_data() const;

  /// The consumer subtasks this producer sends to (one for forward).
  const std::vector<int32_t>& targets() const { return targets_; }

  /// The input channel of a consumer that this producer's batches arrive on.
  int32_t channel() const { return channel_; }

  /// How many batches went to `consumer` so far (the next one's number).
  int64_t sent(int32_t consumer) const {
    return lanes_[static_cast<size_t>(consumer)].sent;
  }

private:
  struct lane {
    std::vector<record> open;
    size_t open_bytes = 0;
    std::deque<record_batch> closed;
    int32_t credit = 0;
    int64_t sent = 0;
  };

  void route(record&& r);
  void append(lane& l, record&& r);
  void close(lane& l);
  void drain_combiner();

  output_desc desc_;
  exchange_options opts_;
  int32_t channel_ = 0;
  std::vector<int32_t> targets_;
  std::vector<lane> lanes_; // one per consumer subtask (index = subtask)
  size_t next_rebalance_ = 0;
  std::unique_ptr<ops::keyed_aggregation> combiner_;
};

} // namespace weir
