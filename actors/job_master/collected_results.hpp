#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "messages/record.hpp"

namespace weir {

/// The records a job's collect sinks handed to the JobMaster, by flat index
/// of the sink subtask, and how many of them each checkpoint covers: a
/// restart that resumes from a checkpoint cuts them back to it. Plain class.
class collected_results {
public:
  /// Sink subtask `sink` handed over `records`.
  void add(int32_t sink, std::vector<record> records);

  /// Subtask `subtask` acknowledged pending checkpoint `checkpoint`: it
  /// covers the records that subtask handed over so far.
  void acknowledged(int64_t checkpoint, int32_t subtask);

  /// Checkpoint `checkpoint` completed: a restart keeps what it covers.
  /// Older pending checkpoints are dropped.
  void commit(int64_t checkpoint);

  /// Pending checkpoints were abandoned.
  void abort_pending();

  /// A restart resumes from the last completed checkpoint: keep only what it
  /// covers (nothing of a sink it does not know).
  void cut_back();

  /// A restart starts over from the sources: drop everything.
  void clear();

  /// The records in sink-subtask order from the `offset`-th on.
  std::vector<record> from(int64_t offset) const;

  /// All records in sink-subtask order, moved out (for the job result).
  std::vector<record> take_all();

private:
  std::map<int32_t, std::vector<record>> records_;
  /// Checkpoint id → subtask → records covered, of pending checkpoints.
  std::map<int64_t, std::map<int32_t, size_t>> pending_;
  /// Subtask → records covered, of the last completed checkpoint.
  std::map<int32_t, size_t> committed_;
};

} // namespace weir
