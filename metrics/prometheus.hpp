#pragma once

// What weir's processes expose on /metrics (docs/operations.md § Metrics):
// Flink's metric scopes as Prometheus names with a `weir_` prefix. Plain
// functions over what the actors answer, so that tests check them alone.

#include <cstdint>
#include <string>
#include <vector>

#include "actors/common/process_stats.hpp"
#include "actors/task_executor/task_metrics.hpp"
#include "messages/job_result.hpp"
#include "messages/resource_manager.hpp"

namespace weir {

/// What the jobmanager's /metrics shows, as its actors answered.
struct jobmanager_metrics_input {
  /// Every known job; those still running with their live status
  /// (restarts, checkpoints).
  std::vector<job_status> jobs;
  cluster_overview cluster;
  std::vector<task_manager_info> task_managers;
  /// Submissions the Dispatcher accepted since it started.
  int64_t submissions = 0;
  int64_t now_ms = 0;
};

/// The jobmanager's exposition: weir_jobmanager_* (cluster, jobs by state,
/// submissions, heartbeat round trips) and weir_jobmanager_job_* (per job).
std::string jobmanager_metrics_text(const jobmanager_metrics_input& in);

/// A taskmanager's exposition: weir_taskmanager_* (slots, process) and
/// weir_taskmanager_job_task_* (per subtask, and _operator_* per operator
/// of its chain), every sample labelled tm_id=`tm_id`.
std::string taskmanager_metrics_text(const task_metrics::snapshot& s,
                                     const std::string& tm_id,
                                     const process_usage& usage);

} // namespace weir
