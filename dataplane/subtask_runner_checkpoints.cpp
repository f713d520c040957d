// The subtask runner's part in checkpoints: barriers, alignment,
// snapshots, commits and stop-with-savepoint.
#include "dataplane/subtask_runner.hpp"

#include <algorithm>
#include <utility>

#include <fmt/format.h>

#include "dataplane/checkpoint_kind.hpp"
#include "dataplane/subtask_runner_inl.hpp"

namespace weir {

void subtask_runner::trigger(const checkpoint_barrier& b) {
  // Sources only; one that is done takes no more checkpoints (the JobMaster
  // abandons checkpoints once subtasks finish).
  if (phase_ != phase::running || !chain_->has_source())
    return;
  metered([&] { guarded([&] { take_checkpoint(b); }); });
}

void subtask_runner::stop_at(const checkpoint_barrier& b) {
  if (phase_ != phase::running || !chain_->has_source())
    return;
  metered([&] { guarded([&] { take_checkpoint(b); }); });
  halted_ = true;
}

void subtask_runner::end_input() {
  if (phase_ != phase::running || !chain_->has_source())
    return;
  halted_ = false;
  metered([&] { guarded([&] { end_of_input(); }); });
}

void subtask_runner::resume() {
  if (!halted_)
    return;
  halted_ = false;
  suspended_ = false;
  schedule_produce();
}

/// The alignment of checkpoint `id` completed: snapshot, then process what
/// waited for it.
void subtask_runner::aligned(int64_t id) {
  aligned_id_ = id;
  aligned_ms_ = std::chrono::duration_cast<std::chrono::milliseconds>(
                  clock_() - alignment_start_)
                  .count();
  take_checkpoint(checkpoint_barrier{id, pending_kind_, pending_suspend_});
  release_held(false);
}

void subtask_runner::release_held(bool ahead) {
  auto held = aligner_.release();
  replay_.insert(ahead ? replay_.begin() : replay_.end(),
                 std::make_move_iterator(held.begin()),
                 std::make_move_iterator(held.end()));
  std::vector<input_credits::grant> grants;
  credits_.unblock_all(grants);
  give(grants);
}

/// Snapshots the operators, sends the barrier after everything emitted so
/// far, and acknowledges (once the state is written, when that is left to
/// another thread: deferred snapshots, and state going to checkpoint
/// storage).
void subtask_runner::take_checkpoint(const checkpoint_barrier& b) {
  taken_ = std::max(taken_, b.id);
  suspended_ = b.suspend;
  chain_->prepare_commit(b.id);
  auto snap = chain_->snapshot(b.id, to_snapshot_kind(b.kind));
  for (auto& g : chain_->gates())
    g.emit_barrier(b);
  drain();
  storage_.offload(b.id, snap);
  if (snap.deferred.empty()) {
    acknowledged_ = std::max(acknowledged_, b.id);
    port_.acknowledge(b.id, alignment_of(b.id), std::move(snap.ready));
  }
  else
    port_.write_snapshot(b.id, std::move(snap));
}

void subtask_runner::snapshot_written(int64_t id, operator_states&& states) {
  if (terminal())
    return;
  metered([&] { guarded([&] { chain_->snapshot_written(id); }); });
  if (!terminal()) {
    acknowledged_ = std::max(acknowledged_, id);
    port_.acknowledge(id, alignment_of(id), std::move(states));
  }
}

void subtask_runner::snapshot_failed(int64_t id, const std::string& error) {
  // A newer checkpoint completed first (a savepoint), or this subtask
  // took a newer one already: this one is subsumed, its directory may be
  // gone, and nobody waits for it.
  if (id < committed_ || id < acknowledged_)
    return;
  fail(fmt::format("could not write checkpoint {}: {}", id, error));
}

int64_t subtask_runner::newest_checkpoint() const {
  return std::max({taken_, acknowledged_, committed_,
                   aligner_.pending().value_or(0)});
}

void subtask_runner::commit(int64_t id) {
  committed_ = std::max(committed_, id);
  if (terminal())
    return;
  metered([&] { guarded([&] { chain_->commit(id); }); });
}

} // namespace weir
