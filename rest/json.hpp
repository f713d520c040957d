#pragma once

// The JSON bodies of the jobmanager's REST API (docs/operations.md § REST
// API): Flink's v1 field names over what the Dispatcher and the
// ResourceManager answer. Plain functions, so that tests check them alone.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "messages/job_graph.hpp"
#include "messages/job_result.hpp"
#include "messages/resource_manager.hpp"

namespace weir::rest {

/// Flink's end-time of a job: -1 while it runs.
int64_t end_time(const job_status& s);

/// How long the job ran (until `now_ms` while it runs).
int64_t duration(const job_status& s, int64_t now_ms);

/// GET /overview: workers, slots, jobs by state and the version.
nlohmann::json overview(const cluster_overview& cluster,
                        const std::vector<job_status>& jobs);

/// GET /jobs: {"jobs": [{"id", "status"}]}.
nlohmann::json jobs(const std::vector<job_status>& jobs);

/// GET /jobs/overview: each job's id, name, state, times and subtasks.
/// `now_ms` is the wall clock (the duration of a job that still runs).
nlohmann::json jobs_overview(const std::vector<job_status>& jobs,
                             int64_t now_ms);

/// GET /jobs/{jobid}: one job, its vertices (operators: records, bytes,
/// parallelism from `g`, status from the subtasks of a job that runs, `s`
/// asked detailed) and its plan.
nlohmann::json job_details(const job_status& s, const job_graph& g,
                           int64_t now_ms);

/// GET /jobs/{jobid}/plan's "plan": one node per vertex with its inputs
/// (only the vertices, without inputs, when `g` is empty: a job known by
/// its stored result alone).
nlohmann::json plan(const job_status& s, const job_graph& g);

/// GET /jobs/{jobid}/vertices/{vertexid}: the vertex's subtasks (nothing
/// when the job has no vertex `id`).
std::optional<nlohmann::json> vertex_details(const job_status& s,
                                             const job_graph& g,
                                             const std::string& id,
                                             int64_t now_ms);

/// GET /jobs/{jobid}/vertices/{vertexid}/backpressure: each subtask's
/// share of time waiting for credit, and Flink's levels (ok up to 10%,
/// low up to 50%, high above).
std::optional<nlohmann::json> backpressure(const job_status& s,
                                           const job_graph& g,
                                           const std::string& id,
                                           int64_t now_ms);

/// GET /jobs/{jobid}/vertices/{vertexid}/watermarks: Flink's bare list of
/// {"id": "<subtask>.currentInputWatermark", "value": "<ms>"} (nothing when
/// the job has no vertex `id`).
std::optional<nlohmann::json> vertex_watermarks(const job_status& s,
                                                const job_graph& g,
                                                const std::string& id);

/// GET /jobs/{jobid}/checkpoints: counts, latest and history.
nlohmann::json checkpoints(const checkpoint_stats& c);

/// GET /jobs/{jobid}/exceptions: the root cause and the failure history.
nlohmann::json exceptions(const job_status& s);

/// GET /jobs/{jobid}/config: the job's execution config and own keys
/// (Flink's form) and, as `weir-effective-config`, every per-job key's
/// value and origin, with `cluster` (the jobmanager's configuration) under
/// the job's own.
nlohmann::json job_config(const job_status& s, const job_graph& g,
                          const configuration& cluster);

/// GET /jobs/{jobid}/execution-result: IN_PROGRESS, or the outcome.
nlohmann::json execution_result(const job_status& s, int64_t now_ms);

/// GET /config: what the dashboard needs to know of the cluster.
nlohmann::json dashboard_config();

/// GET /jobmanager/config: every configuration key with its effective
/// value ([{key, value}]); values of secret keys (passwords) are masked.
nlohmann::json jobmanager_config(const configuration& cfg);

/// GET /taskmanagers/{id}: one TaskExecutor (Flink's TaskManagerInfo: id,
/// slotsNumber, freeSlots, timeSinceLastHeartbeat (as Flink: the wall
/// clock time of the last heartbeat, in ms), hardware).
nlohmann::json task_manager(const task_manager_info& tm);

/// GET /taskmanagers: {"taskmanagers": [...]}.
nlohmann::json task_managers(const std::vector<task_manager_info>& tms);

/// An error body: {"errors": [message]}.
nlohmann::json errors(const std::string& message);

} // namespace weir::rest
