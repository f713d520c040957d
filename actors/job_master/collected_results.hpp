#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "messages/record.hpp"

namespace weir {

/// Appends `rows` from the `from`-th on to `out` while `taken` (the bytes
/// in `out`, counted as collected_results::size_of) stays within
/// `max_bytes`, at least one record in all; false once `out` is full.
bool append_within(const std::vector<record>& rows, size_t from,
                   size_t max_bytes, std::vector<record>& out, size_t& taken);

/// The records a job's collect sinks handed to the JobMaster, by flat index
/// of the sink subtask, and how many of them each checkpoint covers: a
/// restart that resumes from a checkpoint cuts them back to it. What it
/// holds is bounded (collect.max-bytes). Plain class.
class collected_results {
public:
  /// Holds at most `max_bytes` (of keys and texts, plus a few bytes a
  /// record); no bound when 0.
  explicit collected_results(size_t max_bytes = 0) : max_bytes_(max_bytes) {}

  /// Sink subtask `sink` handed over `records`; false (and nothing added)
  /// when they would take the total past the bound.
  bool add(int32_t sink, std::vector<record> records);

  /// The bound given at construction.
  size_t max_bytes() const { return max_bytes_; }

  /// The size a record counts with.
  static size_t size_of(const record& r);

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

  /// The records in sink-subtask order from the `offset`-th on, as many as
  /// fit into `max_bytes` (at least one when there is one).
  std::vector<record> from(int64_t offset, size_t max_bytes) const;

  /// All records in sink-subtask order, moved out (for the job result).
  std::vector<record> take_all();

private:
  size_t max_bytes_;
  size_t bytes_ = 0;
  std::map<int32_t, std::vector<record>> records_;
  /// Checkpoint id → subtask → records covered, of pending checkpoints.
  std::map<int64_t, std::map<int32_t, size_t>> pending_;
  /// Subtask → records covered, of the last completed checkpoint.
  std::map<int32_t, size_t> committed_;
};

} // namespace weir
