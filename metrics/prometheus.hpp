#pragma once

// What weir's processes expose on /metrics (docs/operations.md § Metrics):
// series named and labelled as Flink's Prometheus reporter names them, after
// a configurable prefix. Plain functions over what the actors answer, so
// that tests check them alone.

#include <cstdint>
#include <string>
#include <vector>

#include "actors/common/process_stats.hpp"
#include "actors/task_executor/task_metrics.hpp"
#include "messages/job_result.hpp"
#include "messages/resource_manager.hpp"

namespace weir {

/// How series are named and labelled: Flink's scope and metric names after
/// `prefix` (metrics.reporter.prom.prefix; "flink": Flink's exact names),
/// and `host` as a label of every sample, as Flink's reporter writes them.
struct metric_naming {
  std::string prefix = "flink";
  std::string host;
};

/// This host's name (gethostname), for the `host` label.
std::string metric_host_name();

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

/// The jobmanager's exposition: PREFIX_jobmanager_* (cluster, jobs by
/// state, submissions, heartbeat round trips) and PREFIX_jobmanager_job_*
/// (per job).
std::string jobmanager_metrics_text(const jobmanager_metrics_input& in,
                                    const metric_naming& naming);

/// A taskmanager's exposition: PREFIX_taskmanager_* (slots, process) and
/// PREFIX_taskmanager_job_task_* (per subtask, and _operator_* per
/// operator of its chain), every sample labelled with its tm_id: Flink's
/// 32-hex id of the TaskExecutor named `tm_name`.
std::string taskmanager_metrics_text(const task_metrics::snapshot& s,
                                     const std::string& tm_name,
                                     const process_usage& usage,
                                     const metric_naming& naming);

} // namespace weir
