#pragma once

#include <string>

#include <caf/error.hpp>

#include "actors/job_master/checkpoint_coordinator.hpp"
#include "actors/job_master/execution_graph.hpp"
#include "messages/checkpoint.hpp"

namespace weir {

/// A completed checkpoint by vertex id and subtask index: what a savepoint
/// holds, so that it maps onto a changed graph.
savepoint_data to_savepoint(const execution_graph& g,
                            const completed_checkpoint& cp);

/// The state of every subtask of `g` from savepoint `sp` (read from
/// `path`), by flat index, into `out`. Returns none, or `errc::invalid_job`
/// with one line: a vertex whose parallelism differs, or (unless
/// `ignore_unclaimed`) state of a vertex the job does not have.
[[nodiscard]] caf::error from_savepoint(const execution_graph& g, const savepoint_data& sp,
                          bool ignore_unclaimed, const std::string& path,
                          completed_checkpoint& out);

} // namespace weir
