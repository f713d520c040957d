#pragma once

#include <string>

#include <caf/fwd.hpp>

namespace weir {
class configuration;
struct job_graph;
} // namespace weir

namespace weir::cli {

/// Where the job runs: on a cluster the command starts (its configuration
/// is the client's) or on a session cluster (-m) that has its own.
enum class job_target { embedded, session };

/// Puts the job-level keys of the client's configuration (its file, -D and
/// the flags that spell keys) into the job's own `config`, each with its
/// origin, so that they reach the job on any cluster exactly alike. The
/// job's own `config` (its spec's) replaces a file's value; a command-line
/// value that differs from it is refused, naming both places. For a session job, so is a cluster key given on the command line
/// that the client does not read itself: it configures the cluster's
/// processes, which were started with their own. Cluster keys of a file are
/// not refused, as the file may be the one the cluster was started with.
[[nodiscard]] caf::error carry_job_keys(const configuration& cfg, job_graph& g,
                          job_target target);

} // namespace weir::cli
