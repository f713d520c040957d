#include "plan/savepoint_fit.hpp"

#include <fmt/format.h>

#include "messages/errors.hpp"

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

} // namespace weir
