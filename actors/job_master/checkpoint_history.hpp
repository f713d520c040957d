#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "messages/job_result.hpp"

namespace weir {

/// A job's checkpoint statistics (Flink's CheckpointStatsTracker, as a
/// plain class): counts and the newest checkpoints and savepoints with
/// their outcome, for the REST API and metrics. Times are wall clock,
/// given by the caller.
class checkpoint_history {
public:
  /// Entries kept (Flink's web.checkpoints.history default).
  static constexpr size_t kept = 10;

  /// Newest completed checkpoints whose figures make the percentiles.
  static constexpr size_t sampled = 1000;

  /// Completed checkpoints whose state is kept (state.checkpoints.
  /// num-retained): older ones are discarded.
  explicit checkpoint_history(int32_t retained = 1);

  /// Checkpoint `id` started; `subtasks` acknowledgements complete it. A
  /// savepoint may `stop` the job.
  void triggered(int64_t id, bool savepoint, int32_t subtasks, int64_t now_ms,
                 bool stop = false);

  /// A subtask acknowledged `id` after aligning its barriers for
  /// `alignment_ms` (the checkpoint's alignment time is the longest);
  /// `ack` says which and with how much state.
  void acknowledged(int64_t id, int64_t alignment_ms, int64_t now_ms,
                    subtask_ack ack = {});

  /// `id` completed with `bytes` of state.
  void completed(int64_t id, int64_t bytes, int64_t now_ms);

  /// `id` failed (expired, abandoned by a restart, not stored).
  void failed(int64_t id, const std::string& why, int64_t now_ms);

  /// Savepoint `id` was written to `path`.
  void externalized(int64_t id, const std::string& path);

  /// Savepoint `id` completed but could not be written: it failed.
  void write_failed(int64_t id, const std::string& why, int64_t now_ms);

  /// Every checkpoint in progress failed for `why` (a failover).
  void fail_pending(const std::string& why, int64_t now_ms);

  /// The job restored checkpoint `id`, or the savepoint at `path`.
  void restored(int64_t id, int64_t now_ms, const std::string& path = "");

  /// Counts and history, newest first; in-progress durations up to `now`.
  checkpoint_stats stats(int64_t now_ms) const;

private:
  checkpoint_entry* find(int64_t id);
  void sample(const checkpoint_entry& e);
  void mark_failed(checkpoint_entry& e, const std::string& why, int64_t now_ms);

  int32_t retained_;
  checkpoint_stats counts_;
  std::deque<checkpoint_entry> entries_; ///< oldest first
  /// Figures of the newest `sampled` completed checkpoints, oldest first,
  /// and the sums of all.
  std::deque<int64_t> sizes_, durations_;
  int64_t samples_ = 0, size_sum_ = 0, duration_sum_ = 0;
};

} // namespace weir
