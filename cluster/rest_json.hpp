#pragma once

// The JSON bodies of the jobmanager's REST API (docs/operations.md § REST
// API): Flink's v1 field names over what the Dispatcher and the
// ResourceManager answer. Plain functions, so that tests check them alone.

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "messages/job_result.hpp"
#include "messages/resource_manager.hpp"

namespace weir::rest {

/// GET /overview: workers, slots, jobs by state and the version.
nlohmann::json overview(const cluster_overview& cluster,
                        const std::vector<job_status>& jobs);

/// GET /jobs: {"jobs": [{"id", "status"}]}.
nlohmann::json jobs(const std::vector<job_status>& jobs);

/// GET /jobs/overview: each job's id, name, state, times and subtasks.
/// `now_ms` is the wall clock (the duration of a job that still runs).
nlohmann::json jobs_overview(const std::vector<job_status>& jobs,
                             int64_t now_ms);

/// GET /jobs/{jobid}: one job and its vertices (their records; parallelism
/// and status from the subtasks of a job that runs, `s` asked detailed).
nlohmann::json job_details(const job_status& s, int64_t now_ms);

/// GET /taskmanagers/{id}: one TaskExecutor (Flink's TaskManagerInfo: id,
/// slotsNumber, freeSlots, timeSinceLastHeartbeat (as Flink: the wall
/// clock time of the last heartbeat, in ms), hardware).
nlohmann::json task_manager(const task_manager_info& tm);

/// GET /taskmanagers: {"taskmanagers": [...]}.
nlohmann::json task_managers(const std::vector<task_manager_info>& tms);

/// An error body: {"errors": [message]}.
nlohmann::json errors(const std::string& message);

} // namespace weir::rest
