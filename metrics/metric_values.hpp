#pragma once

// weir's metrics by Flink's names, as values: what a job, a subtask, an
// operator and the jobmanager measure. The Prometheus exposition
// (metrics/prometheus.hpp) and the REST API's metric views (Flink's
// /jobs/{jobid}/metrics and the like) both list these, so both show the
// same names and numbers.

#include <cstdint>
#include <vector>

#include "messages/job_result.hpp"
#include "messages/resource_manager.hpp"

namespace weir {

/// One metric: its name (Flink's, within its scope), kind, help and value.
struct metric_value {
  enum class kind { gauge, counter };
  const char* name;
  kind type;
  const char* help;
  double value;
};

/// A job's: uptime, restarts, checkpoint counts and the last checkpoint's
/// figures (Flink's job scope).
std::vector<metric_value> job_metric_values(const job_status& j,
                                            int64_t now_ms);

/// A subtask's (its chain's): records, bytes, rates, time busy, idle and
/// back-pressured, queues, watermarks (Flink's task scope).
std::vector<metric_value> subtask_metric_values(const io_metrics& m);

/// An operator's within its chain: records in, out and combined (Flink's
/// operator scope).
std::vector<metric_value> operator_metric_values(const vertex_metrics& v);

/// The jobmanager's: TaskExecutors, slots, pending slot requests, running
/// jobs (Flink's jobmanager scope).
std::vector<metric_value> cluster_metric_values(const cluster_overview& c,
                                                const std::vector<job_status>& jobs);

/// A TaskExecutor's, as the ResourceManager knows it: its slots and its
/// last heartbeat's round trip.
std::vector<metric_value> task_manager_metric_values(const task_manager_info& tm);

} // namespace weir
