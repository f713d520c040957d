#include "actors/job_master/savepoint_mapping.hpp"

#include "plan/savepoint_fit.hpp"

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
  if (auto err = check_savepoint_fits(graph, sp, ignore_unclaimed, path))
    return err;
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
