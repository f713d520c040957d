#include "actors/job_master/savepoint_mapping.hpp"

#include <fmt/format.h>

#include "messages/errors.hpp"

namespace weir {

savepoint_data to_savepoint(const execution_graph& g,
                            const completed_checkpoint& cp) {
  savepoint_data sp;
  for (auto& [flat, states] : cp.states) {
    auto& x = g.executions()[static_cast<size_t>(flat)];
    auto parallelism = g.tasks()[static_cast<size_t>(x.task)].parallelism;
    for (auto& [vertex, bytes] : states) {
      auto& subtasks = sp.vertices[vertex];
      subtasks.resize(static_cast<size_t>(parallelism));
      subtasks[static_cast<size_t>(x.subtask)] = bytes;
    }
  }
  return sp;
}

caf::error from_savepoint(const execution_graph& g, const savepoint_data& sp,
                          bool ignore_unclaimed, const std::string& path,
                          completed_checkpoint& out) {
  auto& graph = g.graph();
  for (auto& [vertex, subtasks] : sp.vertices) {
    auto v = vertex_index(graph, vertex);
    if (v < 0) {
      if (ignore_unclaimed)
        continue;
      return make_error(errc::invalid_job,
                        fmt::format("savepoint '{}' holds state of vertex "
                                    "'{}', which this job does not have "
                                    "(-n/--allowNonRestoredState skips it)",
                                    path, vertex));
    }
    auto parallelism = graph.vertices[static_cast<size_t>(v)].parallelism;
    if (static_cast<size_t>(parallelism) != subtasks.size())
      return make_error(errc::invalid_job,
                        fmt::format("savepoint '{}' holds vertex '{}' at "
                                    "parallelism {}, the job runs it at {}",
                                    path, vertex, subtasks.size(),
                                    parallelism));
  }
  for (size_t flat = 0; flat < g.size(); ++flat) {
    auto& x = g.executions()[flat];
    for (auto v : g.tasks()[static_cast<size_t>(x.task)].vertices) {
      auto& vertex = graph.vertices[static_cast<size_t>(v)].id;
      auto i = sp.vertices.find(vertex);
      if (i == sp.vertices.end())
        continue;
      auto& bytes = i->second[static_cast<size_t>(x.subtask)];
      if (!bytes.empty())
        out.states[static_cast<int32_t>(flat)][vertex] = bytes;
    }
  }
  return caf::none;
}

} // namespace weir
