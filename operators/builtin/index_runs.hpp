#pragma once

// The positions of a source whose subtask s of n emits the indices s,
// s + n, s + 2n, ... (generator, elements), as runs that survive a rescale
// (docs/state.md § Rescaling): each old subtask's run goes on in exactly
// one new subtask, so no index is emitted twice or never.

#include <cstdint>
#include <string>
#include <vector>

namespace weir::ops {

/// Indices next, next + stride, next + 2 × stride, ...
struct index_run {
  int64_t next = 0;
  int64_t stride = 1;
};

/// A snapshot of `runs`: the one run's next index when it is a fresh
/// start's (its stride is `parallelism`; the format from before
/// rescaling), else (next, stride) pairs.
std::string write_runs(const std::vector<index_run>& runs,
                       int64_t parallelism);

/// Reads what write_runs wrote with `parallelism`; a malformed snapshot
/// throws operator_error naming operator `what`.
std::vector<index_run> read_runs(const std::string& bytes, int64_t parallelism,
                                 const std::string& what);

/// The runs subtask `index` of `parallelism` goes on with after a rescale:
/// the runs of every old subtask (`old_states`, in subtask order) that
/// have indices below `limit` left (-1: unbounded), dealt round-robin; when
/// there are fewer runs than subtasks, each is first split into
/// interleaved runs of a longer stride, so that every subtask gets one.
std::vector<index_run> deal_runs(const std::vector<std::string>& old_states,
                                 int64_t index, int64_t parallelism,
                                 int64_t limit, const std::string& what);

} // namespace weir::ops
