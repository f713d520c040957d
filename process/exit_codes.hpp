#pragma once

// The one table of the exit codes of weir's processes: the CLI's actions,
// a jobmanager and a taskmanager (docs/operations.md § Exit codes). A
// driver's own exit status shares the range above 3.

namespace weir {

/// The job FINISHED, the action succeeded, or the process ended on a
/// signal.
constexpr int exit_ok = 0;
/// The job ended FAILED or CANCELED; an application cluster's application
/// failed.
constexpr int exit_job_failed = 1;
/// Bad usage or input, nothing ran: an unknown flag, a bad spec, a bad
/// configuration (unusable TLS files included), a missing file.
constexpr int exit_bad_input = 2;
/// The cluster could not be started or was lost: its state directory or
/// storage cannot be used, a port cannot be bound, a job or its result could
/// not be stored, the Dispatcher went away.
constexpr int exit_cluster_error = 3;
/// A jobmanager's supervisor gave up: its Dispatcher or ResourceManager
/// crashed more often than the restart intensity allows.
constexpr int exit_supervision_gave_up = 4;
/// A jobmanager lost its leadership (its etcd lease could not be renewed in
/// time): it ends before another could lead, and a process supervisor
/// starts it again as a standby.
constexpr int exit_leadership_lost = 5;
/// A taskmanager reached no jobmanager for taskmanager.registration.timeout
/// (its application cluster is gone).
constexpr int exit_jobmanager_unreachable = 6;

} // namespace weir
