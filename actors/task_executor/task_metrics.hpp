#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>
#include <vector>

#include "messages/ids.hpp"
#include "messages/job_result.hpp"

namespace weir {

/// Who a subtask is, as its metrics are labelled (Flink's task scope).
struct subtask_labels {
  job_id job;
  std::string job_name;
  int32_t task_index = 0;     ///< which chain of the job
  std::string task_id;        ///< the chain's first vertex
  std::string task_name;      ///< e.g. "lines -> words"
  int32_t subtask_index = 0;
  int32_t attempt_number = 0; ///< the job's restarts before this attempt
};

/// One subtask's metrics as last reported.
struct subtask_sample {
  subtask_labels labels;
  io_metrics metrics;
  bool ended = false;
};

/// A taskmanager process's metrics for its Prometheus endpoint
/// (docs/operations.md § Metrics): its subtasks' last reports and its
/// slots. Thread-safe: subtasks and the TaskExecutor write at their
/// periodic reports (never per record), the HTTP thread reads.
///
/// A subtask keeps its entry (job, chain, index) until a newer attempt of
/// it reports; one that ended keeps its final values for `keep_ended`
/// after it ended, so that a scrape sees a finished job's final numbers.
class task_metrics {
public:
  using clock = std::chrono::steady_clock;

  explicit task_metrics(std::chrono::milliseconds keep_ended
                        = std::chrono::minutes{5});

  /// A subtask's report; `ended` when it reached a terminal state. A report
  /// of an older attempt than the one kept is ignored.
  void update(const subtask_labels& labels, const io_metrics& metrics,
              bool ended, clock::time_point now);

  /// The TaskExecutor's slots.
  void set_slots(int32_t total, int32_t free);

  struct snapshot {
    std::vector<subtask_sample> subtasks; ///< by job, chain, index
    int32_t slots_total = 0;
    int32_t slots_free = 0;
  };

  /// What is known at `now`, after dropping ended subtasks kept long enough.
  snapshot read(clock::time_point now);

private:
  /// Drops subtasks that ended longer than keep_ended ago (holding mtx_).
  void prune(clock::time_point now);

  using key = std::tuple<job_id, int32_t, int32_t>;
  struct entry {
    subtask_sample sample;
    clock::time_point ended_at;
  };

  std::chrono::milliseconds keep_ended_;
  std::mutex mtx_;
  std::map<key, entry> subtasks_;
  int32_t slots_total_ = 0;
  int32_t slots_free_ = 0;
};

} // namespace weir
