#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "dataplane/input_queue.hpp"

namespace weir {

/// Aligns checkpoint barriers over a subtask's input channels (Flink's
/// aligned checkpoints, as a plain class). Once a channel delivered the
/// barrier of checkpoint n, its later events wait here until every other
/// open channel delivered that barrier too; then the subtask takes its
/// snapshot, forwards the barrier and processes what waited. The snapshot so
/// holds exactly the records before the barrier on every channel.
class barrier_aligner {
public:
  explicit barrier_aligner(size_t channels);

  /// Whether events of `channel` must wait (it delivered the pending
  /// barrier).
  bool blocked(int32_t channel) const;

  /// Keeps an event of a blocked channel until the alignment completes.
  void hold(input_event ev);

  /// Checkpoint `id`'s barrier arrived on `channel`. True when that aligned
  /// it: every channel still open delivered it. A barrier of a newer
  /// checkpoint abandons an older pending alignment (its held events are
  /// released with the next release()).
  bool on_barrier(int32_t channel, int64_t id);

  /// `channel` ended; it no longer holds an alignment back. True when that
  /// completes the pending one.
  bool on_end(int32_t channel);

  /// After an alignment: the held events in arrival order; every channel
  /// is unblocked.
  std::deque<input_event> release();

  /// How many events wait for the alignment.
  size_t held() const { return held_.size(); }

  /// The checkpoint being aligned, if any.
  std::optional<int64_t> pending() const { return pending_; }

private:
  bool aligned() const;

  std::vector<bool> arrived_;
  std::vector<bool> ended_;
  std::optional<int64_t> pending_;
  std::deque<input_event> held_;
};

} // namespace weir
