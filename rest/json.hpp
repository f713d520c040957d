#pragma once

// The JSON bodies of the jobmanager's REST API (docs/operations.md § REST
// API): Flink's v1 field names over what the Dispatcher and the
// ResourceManager answer. Plain functions, so that tests check them alone.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>
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

/// GET .../vertices/{vertexid}/subtasks/{index}[/attempts/{attempt}]: one
/// subtask of `vertex` (resolved) as the vertex details list it; nothing
/// when it has no such subtask (or not at that attempt: weir keeps the
/// current attempt only).
std::optional<nlohmann::json> subtask_details(const job_status& s,
                                              const std::string& vertex,
                                              int32_t index,
                                              std::optional<int32_t> attempt,
                                              int64_t now_ms);

/// GET .../vertices/{vertexid}/subtasktimes: each subtask's duration and
/// the time it reached each ExecutionState (its deployment for the states
/// up to its current one, its end for the one it ended in, else 0).
nlohmann::json subtask_times(const job_status& s, const std::string& vertex,
                             int64_t now_ms);

/// GET .../vertices/{vertexid}/taskmanagers: the vertex's subtasks by
/// TaskExecutor: state, times, records and bytes, counts by state.
nlohmann::json vertex_task_managers(const job_status& s,
                                    const std::string& vertex, int64_t now_ms);

/// GET /jobs/{jobid}/accumulators: the user counters ("vertex.name") as
/// Flink's user-task accumulators.
nlohmann::json job_accumulators(const job_status& s);

/// GET .../vertices/{vertexid}/accumulators: the vertex's counters.
nlohmann::json vertex_accumulators(const job_status& s,
                                   const std::string& vertex);

/// GET .../vertices/{vertexid}/subtasks/accumulators: each subtask's.
nlohmann::json subtask_accumulators(const job_status& s, const job_graph& g,
                                    const std::string& vertex);

/// GET .../subtasks/{index}/attempts/{attempt}/accumulators (nothing: no
/// such subtask or attempt).
std::optional<nlohmann::json> attempt_accumulators(const job_status& s,
                                                   const std::string& vertex,
                                                   int32_t index,
                                                   int32_t attempt);

/// GET /jobs/{jobid}/checkpoints/details/{checkpointid}: one checkpoint of
/// the history or the latest ones, with each vertex's share in `tasks`
/// (nothing when it is not among them).
std::optional<nlohmann::json> checkpoint_details(const job_status& s,
                                                 const job_graph& g,
                                                 int64_t id);

/// GET .../checkpoints/details/{checkpointid}/subtasks/{vertexid}: the
/// vertex's share of the checkpoint, a summary over its subtasks and each
/// subtask's acknowledgement (nothing: no such checkpoint or vertex).
std::optional<nlohmann::json> checkpoint_subtasks(const job_status& s,
                                                  const job_graph& g,
                                                  int64_t id,
                                                  const std::string& vertex);

/// GET /jobs/{jobid}/checkpoints/config: the job's checkpointing settings
/// (nothing when it does not checkpoint, as Flink: 404).
std::optional<nlohmann::json> checkpoint_config(const job_graph& g,
                                                const configuration& cluster);

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

/// Flink's SerializedThrowable of a failure: its class, its one-line
/// cause as "stack-trace", and (as Flink's Java-serialized bytes are) that
/// text in base64 as "serialized-throwable".
nlohmann::json failure_cause(const std::string& why,
                             const std::string& cls = "weir.JobFailure");

/// The commit weir was built from ("unknown" without one).
extern const char* const revision;

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

/// Whether chain "a -> b -> c" holds vertex `id`.
bool chain_holds(const std::string& chain, const std::string& id);

/// `g` with each vertex at the parallelism its subtasks in `s` run at (a
/// rescaled job's, or one the adaptive scheduler sized), where `s` has
/// them; its stored parallelism otherwise.
void with_running_parallelism(const job_status& s, job_graph& g);

/// The vertex of `s` that `text` names: its 32-hex id, or its name (a weir
/// extension); nothing when none.
std::optional<std::string> resolve_vertex(const job_status& s,
                                          const job_graph& g,
                                          const std::string& text);

// --- metrics (rest/json_metrics.cpp) --------------------------------------

/// Metrics by name (Flink's, "0.numRecordsIn" for a subtask's).
using metric_set = std::vector<std::pair<std::string, double>>;

/// Flink's metric list: [{"id"}] for every metric without `get`; with it
/// (comma-separated names), [{"id", "value"}] for those that exist, each
/// value as text.
nlohmann::json metric_list(const metric_set& all,
                           const std::optional<std::string>& get);

/// ?agg=: the aggregations asked for (min, max, avg, sum; any case; none:
/// all four), or errc::invalid_request naming one that is not.
[[nodiscard]] caf::expected<std::vector<std::string>>
parse_aggregations(const std::string& text);

/// Flink's aggregated metrics over `sets`: [{"id"}] for every name without
/// `get`; with it, [{"id", and each of `aggregations`}] for those names.
nlohmann::json aggregated_metrics(const std::vector<metric_set>& sets,
                                  const std::optional<std::string>& get,
                                  const std::vector<std::string>& aggregations);

/// A job's metrics (uptime, restarts, checkpoints).
metric_set job_metrics(const job_status& s, int64_t now_ms);

/// The jobmanager's (TaskExecutors, slots, running jobs).
metric_set cluster_metrics(const cluster_overview& c,
                           const std::vector<job_status>& jobs);

/// A TaskExecutor's, as the ResourceManager knows it (slots, heartbeat).
metric_set task_manager_metrics(const task_manager_info& tm);

/// Each subtask of `vertex` (by index): its chain's metrics, and the
/// vertex's operator metrics as "VERTEX.numRecordsIn".
std::vector<std::pair<int32_t, metric_set>>
subtask_metrics(const job_status& s, const std::string& vertex);

/// Flink's task metrics of `vertex`: each subtask's, prefixed "INDEX.".
metric_set vertex_metrics_of(const job_status& s, const std::string& vertex);

/// An error body: {"errors": [message]}.
nlohmann::json errors(const std::string& message);

} // namespace weir::rest
