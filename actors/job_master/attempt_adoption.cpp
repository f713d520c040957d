#include "actors/job_master/attempt_adoption.hpp"

#include <fmt/format.h>

namespace weir {

namespace {

adoption_plan refuse(std::string why) {
  adoption_plan out;
  out.problem = std::move(why);
  return out;
}

} // namespace

adoption_plan plan_adoption(const execution_graph& g,
                            std::vector<running_attempt> reported) {
  auto& tasks = g.tasks();
  auto& vertices = g.graph().vertices;
  std::vector<running_attempt> by_flat(g.size());
  std::vector<bool> seen(g.size(), false);
  for (auto& r : reported) {
    if (r.task_index < 0 || static_cast<size_t>(r.task_index) >= tasks.size())
      return refuse(fmt::format("a subtask of task {} runs, the job has {} "
                                "tasks",
                                r.task_index, tasks.size()));
    auto& t = tasks[static_cast<size_t>(r.task_index)];
    auto head = vertices[static_cast<size_t>(t.vertices.front())].id;
    if (r.head != head)
      return refuse(fmt::format("task {} runs chain '{}', the job's is '{}'",
                                r.task_index, r.head, head));
    if (r.parallelism != t.parallelism)
      return refuse(fmt::format("'{}' runs at parallelism {}, the job's "
                                "graph has {}",
                                t.name, r.parallelism, t.parallelism));
    if (r.subtask_index < 0 || r.subtask_index >= t.parallelism)
      return refuse(fmt::format("'{}' reports subtask {} of {}", t.name,
                                r.subtask_index, t.parallelism));
    auto flat = static_cast<size_t>(t.first_execution + r.subtask_index);
    if (seen[flat])
      return refuse(fmt::format("'{}' ({}/{}) runs twice", t.name,
                                r.subtask_index + 1, t.parallelism));
    seen[flat] = true;
    by_flat[flat] = std::move(r);
  }
  for (size_t i = 0; i < seen.size(); ++i)
    if (!seen[i]) {
      auto& x = g.executions()[i];
      auto& t = tasks[static_cast<size_t>(x.task)];
      return refuse(fmt::format("'{}' ({}/{}) no longer runs", t.name,
                                x.subtask + 1, t.parallelism));
    }
  adoption_plan out;
  out.attempts = std::move(by_flat);
  return out;
}

} // namespace weir
