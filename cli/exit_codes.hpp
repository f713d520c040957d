#pragma once

namespace weir::cli {

/// The job FINISHED (or the action succeeded).
constexpr int exit_ok = 0;
/// The job ended FAILED or CANCELED.
constexpr int exit_job_failed = 1;
/// Bad usage or bad input: unknown flag, bad spec, missing file.
constexpr int exit_bad_input = 2;
/// The cluster could not be started (state directory, storage).
constexpr int exit_cluster_error = 3;

} // namespace weir::cli
