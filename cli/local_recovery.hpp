#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "client/job_service.hpp"
#include "messages/job_result.hpp"

namespace weir::cli {

/// The jobs the embedded cluster of `weir run --state-dir DIR` recovered:
/// those its Dispatcher recovered from the state directory at its start
/// (job_status::recovered), ended since or not, but `own` (a job submitted
/// again under its --jobid). Empty when the Dispatcher does not answer.
std::vector<job_status> recovered_jobs_of(client::job_service& jobs,
                                          const job_id& own);

/// What became of a recovered job when the run ends, as `weir run` says it
/// on stderr: "weir run: recovered job ID (NAME) from DIR; it finished",
/// "...; it ended FAILED: CAUSE", "...; it is waiting for 2 of its 2 slots
/// (this cluster has 1) and was left unfinished in DIR", "...; it was still
/// RUNNING and was left unfinished in DIR". `now` is its status at the end,
/// `result` its result when it ended; `slots` the cluster's slots.
std::string recovered_job_line(const job_status& now,
                               const std::optional<job_result>& result,
                               const std::string& dir, int64_t slots);

/// Says on stderr which jobs were recovered, when the run starts: "weir
/// run: recovered job ID (NAME) from DIR, left unfinished there; it is
/// started too".
void announce_recovered_jobs(const std::vector<job_status>& recovered,
                             const std::string& dir);

/// Says on stderr what became of each of `recovered` (recovered_job_line),
/// when the run ends.
void report_recovered_jobs(client::job_service& jobs,
                           const std::vector<job_status>& recovered,
                           const std::string& dir, int64_t slots);

} // namespace weir::cli
