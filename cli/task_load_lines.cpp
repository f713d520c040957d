#include "cli/task_load_lines.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace weir::cli {

namespace {

struct task_figures {
  std::string task;
  double in = 0;
  double out = 0;
  double busy = 0;
  double backpressured = 0;
};

int64_t whole(double x) {
  return static_cast<int64_t>(std::llround(x));
}

} // namespace

std::vector<std::string>
task_load_lines(const std::vector<subtask_status>& subtasks) {
  std::vector<task_figures> tasks;
  size_t width = 0;
  for (auto& s : subtasks) {
    auto same = [&](const task_figures& t) { return t.task == s.task; };
    auto i = std::find_if(tasks.begin(), tasks.end(), same);
    if (i == tasks.end()) {
      tasks.push_back(task_figures{s.task});
      i = tasks.end() - 1;
      width = std::max(width, s.task.size());
    }
    if (s.state != execution_state::running)
      continue;
    auto& l = s.metrics.load;
    i->in += l.records_in_per_s;
    i->out += l.records_out_per_s;
    i->busy = std::max(i->busy, l.busy_ms_per_s);
    i->backpressured = std::max(i->backpressured, l.backpressured_ms_per_s);
  }
  std::vector<std::string> lines;
  for (auto& t : tasks)
    lines.push_back(fmt::format(
      "  {:<{}}  {} in/s  {} out/s  busy {} ms/s  backpressured {} ms/s",
      t.task, width, whole(t.in), whole(t.out), whole(t.busy),
      whole(t.backpressured)));
  return lines;
}

} // namespace weir::cli
