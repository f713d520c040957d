#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "messages/collected_rows.hpp"
#include "messages/job_graph.hpp"

namespace weir {

/// The rows a job's collect sinks handed to the JobMaster, by flat index
/// of the sink subtask, and how many of them each checkpoint covers: a
/// restart that resumes from a checkpoint cuts them back to it. What it
/// holds is bounded (collect.max-bytes, by row_bytes). Plain class.
class collected_results {
public:
  /// Holds at most `max_bytes`; no bound when 0.
  explicit collected_results(size_t max_bytes = 0) : max_bytes_(max_bytes) {}

  /// Sink subtask `sink` handed over `rows`; false (and nothing added)
  /// when they would take the total past the bound.
  bool add(int32_t sink, collected_table rows);

  /// The bound given at construction.
  size_t max_bytes() const { return max_bytes_; }

  /// Subtask `subtask` acknowledged pending checkpoint `checkpoint`: it
  /// covers the rows that subtask handed over so far.
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

  /// The rows in sink-subtask order from the `offset`-th on, as many as
  /// fit into `max_bytes` (at least one when there is one).
  std::vector<collected_table> from(int64_t offset, size_t max_bytes) const;

  /// All rows in sink-subtask order, one table per sink vertex, moved out
  /// (for the job result).
  std::vector<collected_table> take_all();

private:
  size_t max_bytes_;
  size_t bytes_ = 0;
  std::map<int32_t, collected_table> tables_;
  /// Checkpoint id → subtask → rows covered, of pending checkpoints.
  std::map<int64_t, std::map<int32_t, size_t>> pending_;
  /// Subtask → rows covered, of the last completed checkpoint.
  std::map<int32_t, size_t> committed_;
};

/// `tables` as a job's result holds them: one per collect sink of `g`, in
/// the graph's order (an empty one, of the sink's schema, for a sink that
/// received nothing), then the others (a driver's printed lines).
std::vector<collected_table>
one_table_per_sink(std::vector<collected_table> tables, const job_graph& g);

} // namespace weir
