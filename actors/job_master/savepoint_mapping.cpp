#include "actors/job_master/savepoint_mapping.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "messages/errors.hpp"

#include "messages/key_groups.hpp"
#include "plan/savepoint_fit.hpp"
#include "storage/state/rescale.hpp"

namespace weir {

savepoint_data to_savepoint(const execution_graph& g,
                            const completed_checkpoint& cp) {
  savepoint_data sp;
  for (auto& [flat, states] : cp.states) {
    auto& x = g.executions()[static_cast<size_t>(flat)];
    auto& task = g.tasks()[static_cast<size_t>(x.task)];
    for (auto& [vertex, bytes] : states) {
      auto& subtasks = sp.vertices[vertex];
      subtasks.resize(static_cast<size_t>(task.parallelism));
      subtasks[static_cast<size_t>(x.subtask)] = bytes;
      sp.max_parallelism[vertex] = task.max_parallelism;
    }
  }
  return sp;
}

namespace {

/// Subtask `index` of `task`'s share of `old` (the vertex's snapshots at
/// another parallelism or from before key groups, `old_groups` 0): its key
/// groups, and every old subtask's snapshot, marked whether its key
/// groups overlap (all of them before key groups: any may hold any key).
std::string rescaled_share(const task_vertex& task, int32_t index,
                           const std::vector<std::string>& old,
                           int32_t old_groups) {
  state::rescaled_state r;
  r.max_parallelism = task.max_parallelism;
  r.range = key_group_range_of(index, task.parallelism, task.max_parallelism);
  auto old_parallelism = static_cast<int32_t>(old.size());
  r.same_parallelism = old_parallelism == task.parallelism;
  for (int32_t j = 0; j < old_parallelism; ++j) {
    bool keyed = old_groups == 0
                 || r.range.overlaps(
                   key_group_range_of(j, old_parallelism, old_groups));
    r.old_subtasks.push_back({old[static_cast<size_t>(j)], keyed});
  }
  return state::encode_rescaled(r);
}

} // namespace

caf::error from_savepoint(const execution_graph& g, const savepoint_data& sp,
                          bool ignore_unclaimed, const std::string& path,
                          completed_checkpoint& out) {
  auto& graph = g.graph();
  if (auto err = check_savepoint_fits(graph, sp, ignore_unclaimed, path))
    return err;
  for (size_t flat = 0; flat < g.size(); ++flat) {
    auto& x = g.executions()[flat];
    auto& task = g.tasks()[static_cast<size_t>(x.task)];
    for (auto v : task.vertices) {
      auto& vertex = graph.vertices[static_cast<size_t>(v)].id;
      auto i = sp.vertices.find(vertex);
      if (i == sp.vertices.end())
        continue;
      auto& old = i->second;
      auto groups = sp.max_parallelism.find(vertex);
      auto old_groups = groups == sp.max_parallelism.end() ? 0 : groups->second;
      if (old_groups != 0 && old_groups != task.max_parallelism)
        return make_error(
          errc::invalid_job,
          fmt::format("savepoint '{}' holds vertex '{}' with max parallelism "
                      "{} (its key groups), the job sets "
                      "pipeline.max-parallelism {}",
                      path, vertex, old_groups, task.max_parallelism));
      if (old_groups == task.max_parallelism
          && old.size() == static_cast<size_t>(task.parallelism)) {
        // The same key groups in the same subtasks: as it was.
        if (auto& bytes = old[static_cast<size_t>(x.subtask)]; !bytes.empty())
          out.states[static_cast<int32_t>(flat)][vertex] = bytes;
        continue;
      }
      if (std::all_of(old.begin(), old.end(),
                      [](auto& bytes) { return bytes.empty(); }))
        continue;
      out.states[static_cast<int32_t>(flat)][vertex]
        = rescaled_share(task, x.subtask, old, old_groups);
    }
  }
  return caf::none;
}

} // namespace weir
