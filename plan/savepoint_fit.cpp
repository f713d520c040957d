#include "plan/savepoint_fit.hpp"

#include <fmt/format.h>

#include "messages/errors.hpp"
#include "operators/registry.hpp"
#include "storage/state/snapshot_format.hpp"

namespace weir {

caf::error check_savepoint_fits(const job_graph& g, const savepoint_data& sp,
                                bool ignore_unclaimed, const std::string& path) {
  for (auto& [vertex, subtasks] : sp.vertices) {
    auto v = vertex_index(g, vertex);
    if (v < 0) {
      if (ignore_unclaimed)
        continue;
      return make_error(errc::invalid_job,
                        fmt::format("savepoint '{}' holds state of vertex "
                                    "'{}', which this job does not have "
                                    "(-n/--allowNonRestoredState skips it)",
                                    path, vertex));
    }
    // Another parallelism splits the vertex's key groups anew, so it can
    // be at most their number.
    auto parallelism = g.vertices[static_cast<size_t>(v)].parallelism;
    auto groups = sp.max_parallelism.find(vertex);
    if (groups != sp.max_parallelism.end() && parallelism > groups->second)
      return make_error(errc::invalid_job,
                        fmt::format("savepoint '{}' holds vertex '{}' in {} "
                                    "key groups (its max parallelism), the "
                                    "job runs it at parallelism {}",
                                    path, vertex, groups->second,
                                    parallelism));
  }
  return caf::none;
}

caf::error check_savepoint_fits(const job_graph& g, const savepoint_data& sp,
                                bool ignore_unclaimed, const std::string& path,
                                const ops::registry& operators) {
  if (auto err = check_savepoint_fits(g, sp, ignore_unclaimed, path))
    return err;
  for (auto& [vertex, subtasks] : sp.vertices) {
    auto v = vertex_index(g, vertex);
    if (v < 0)
      continue;
    auto& spec = g.vertices[static_cast<size_t>(v)];
    if (static_cast<size_t>(spec.parallelism) == subtasks.size())
      continue;
    auto* f = operators.find(spec.op);
    if (f == nullptr || f->splits_operator_state)
      continue;
    for (auto& bytes : subtasks) {
      auto snap = state::decode_vertex_snapshot(bytes);
      if (snap && !snap->operator_state.empty())
        return make_error(
          errc::invalid_job,
          fmt::format("savepoint '{}' holds operator state of vertex '{}' "
                      "at parallelism {}, which operator '{}' cannot split "
                      "over parallelism {} (docs/state.md § Rescaling)",
                      path, vertex, subtasks.size(), spec.op,
                      spec.parallelism));
    }
  }
  return caf::none;
}

} // namespace weir
