#pragma once

#include <caf/error.hpp>

#include "messages/job_result.hpp"
#include "storage/kv_store.hpp"

namespace weir::storage {

/// The storage side of a job's end, in Flink's order: (1) store `result`
/// dirty (synced); (2) in one synced batch, remove the job's graph, apply
/// `cleanup` (say, removing its checkpoints) and mark the result clean.
/// A crash between the two leaves a dirty result and the graph: recovery must
/// not run the job again and calls finish_job again to complete the cleanup.
/// Stops at the first error.
[[nodiscard]] caf::error finish_job(kv_store& kv, const job_result& result,
                      write_batch cleanup = {});

} // namespace weir::storage
