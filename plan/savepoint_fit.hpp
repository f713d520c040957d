#pragma once

#include <string>

#include <caf/error.hpp>

#include "messages/checkpoint.hpp"
#include "messages/job_graph.hpp"

namespace weir::ops {
class registry;
} // namespace weir::ops

namespace weir {

/// Whether savepoint `sp` (read from `path`) can start job `g`: every vertex
/// it holds state of is one of the job's (unless `ignore_unclaimed`), at a
/// parallelism no higher than the vertex's key groups in the savepoint
/// (its max parallelism). Returns none, or `errc::invalid_job` with one line
/// naming the savepoint and the vertex. The client checks this before it
/// submits a job with `-s`/`-r`, the JobMaster again when it restores.
[[nodiscard]] caf::error check_savepoint_fits(const job_graph& g, const savepoint_data& sp,
                                bool ignore_unclaimed, const std::string& path);

/// As above, and (the client's check before it submits) a vertex that
/// kept operator state restores at another parallelism only when its
/// operator in `operators` splits it (operator_factory::
/// splits_operator_state); an operator it does not know, or state it
/// cannot read here (a checkpoint's state handles), passes.
[[nodiscard]] caf::error check_savepoint_fits(const job_graph& g, const savepoint_data& sp,
                                bool ignore_unclaimed, const std::string& path,
                                const ops::registry& operators);

} // namespace weir
