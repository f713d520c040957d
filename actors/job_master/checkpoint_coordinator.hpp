#pragma once

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "messages/deployment.hpp"

namespace weir {

class configuration;

/// Flink's execution.checkpointing.* keys.
struct checkpoint_options {
  /// 0: no periodic checkpoints (Flink's default: checkpointing is off).
  std::chrono::milliseconds interval{0};
  std::chrono::milliseconds timeout{600000};
  int32_t max_concurrent = 1;
  std::chrono::milliseconds min_pause{0};
  /// Completed checkpoints kept (state.checkpoints.num-retained).
  int32_t retained = 1;

  static checkpoint_options from(const configuration& cfg);
};

/// A checkpoint every subtask acknowledged.
struct completed_checkpoint {
  int64_t id = 0;
  /// By flat execution index: small states inline, larger ones as handles
  /// of their files in checkpoint storage.
  std::map<int32_t, operator_states> states;
  /// The state's size (a handle counts with its file's size).
  int64_t bytes = 0;
  std::chrono::milliseconds duration{0};
};

/// The JobMaster's checkpoint bookkeeping (Flink's CheckpointCoordinator,
/// as a plain class): when to trigger, which subtasks still owe an
/// acknowledgement, which checkpoints completed or expired.
class checkpoint_coordinator {
public:
  using clock = std::chrono::steady_clock;

  /// `subtasks` acknowledgements complete a checkpoint.
  checkpoint_coordinator(checkpoint_options opts, int32_t subtasks);

  /// A new checkpoint id when one may start at `now` (fewer than
  /// max_concurrent pending, min_pause since the last completion), or
  /// always when `forced` (a checkpoint or savepoint a client asked for).
  std::optional<int64_t> trigger(clock::time_point now, bool forced = false);

  /// Subtask `flat` acknowledged checkpoint `id` with its state. Returns
  /// the checkpoint when that completed it; unknown or expired ids and
  /// repeated acknowledgements are ignored. It is not what a restart
  /// resumes from until it is confirmed.
  std::optional<completed_checkpoint> acknowledge(int64_t id, int32_t flat,
                                                  operator_states state,
                                                  clock::time_point now);

  /// Checkpoint `cp` (as acknowledge returned it) is stored: it is the
  /// newest completed one now, what a restart resumes from. One that could
  /// not be stored is never confirmed: its sinks did not commit, so a
  /// restart from it would lose what they held (found by `weir-sim`,
  /// docs/simulation.md § What the seeds found). An older one than the
  /// newest is ignored.
  void confirm(completed_checkpoint cp);

  /// Drops the pending checkpoints older than the timeout; returns their
  /// ids.
  std::vector<int64_t> expire(clock::time_point now);

  /// A checkpoint stored by an earlier JobMaster of the job becomes the
  /// newest completed one; new ids continue after it.
  void restore(completed_checkpoint cp);

  /// A rescale: `subtasks` acknowledgements complete a checkpoint from now
  /// on, and `latest` (the newest completed one, mapped onto the new
  /// subtasks), if any, is the only completed one; pending ones are
  /// abandoned and ids go on (an abandoned id is never reused).
  void rescale(int32_t subtasks, std::optional<completed_checkpoint> latest);

  /// Subtasks adopted after a failover saw checkpoints up to `id` (their
  /// predecessor's, perhaps never completed): new ids continue after it.
  void skip_to(int64_t id) { next_id_ = std::max(next_id_, id + 1); }

  /// A failover: every pending checkpoint is abandoned (completed ones stay
  /// and are what the job restarts from).
  void abort_pending();

  /// The newest completed checkpoint, if any.
  const completed_checkpoint* latest() const;

  /// Completed checkpoints, oldest first (at most `retained`).
  const std::deque<completed_checkpoint>& completed() const {
    return completed_;
  }

  size_t pending_count() const { return pending_.size(); }
  const checkpoint_options& options() const { return opts_; }

private:
  struct pending {
    clock::time_point started;
    std::set<int32_t> waiting;
    completed_checkpoint result;
  };

  checkpoint_options opts_;
  int32_t subtasks_;
  int64_t next_id_ = 1;
  std::map<int64_t, pending> pending_;
  std::deque<completed_checkpoint> completed_;
  std::optional<clock::time_point> last_completed_;
};

} // namespace weir
