#include "cli/task_load_lines.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>

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

namespace {

constexpr int64_t none = std::numeric_limits<int64_t>::min();
constexpr int64_t end = std::numeric_limits<int64_t>::max();

/// A watermark as `weir status` shows it: UTC to the millisecond.
std::string watermark_text(int64_t ms) {
  if (ms == none)
    return "none";
  if (ms == end)
    return "end";
  auto secs = ms / 1000 - (ms % 1000 < 0 ? 1 : 0);
  auto millis = ms - secs * 1000;
  auto t = static_cast<std::time_t>(secs);
  std::tm tm{};
  if (gmtime_r(&t, &tm) == nullptr)
    return std::to_string(ms) + " ms";
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03}Z", buf, millis);
}

} // namespace

std::vector<std::string>
watermark_lines(const std::vector<subtask_status>& subtasks) {
  struct task_marks {
    std::string task;
    int64_t input = end;
    int64_t output = end;
    bool any = false;
  };
  std::vector<task_marks> tasks;
  size_t width = 0;
  for (auto& s : subtasks) {
    auto i = std::find_if(tasks.begin(), tasks.end(),
                          [&](const task_marks& t) { return t.task == s.task; });
    if (i == tasks.end()) {
      tasks.push_back(task_marks{s.task});
      i = tasks.end() - 1;
    }
    auto& l = s.metrics.load;
    i->input = std::min(i->input, l.input_watermark);
    i->output = std::min(i->output, l.output_watermark);
    i->any = i->any || l.input_watermark != none || l.output_watermark != none;
  }
  for (auto& t : tasks)
    if (t.any)
      width = std::max(width, t.task.size());
  std::vector<std::string> lines;
  for (auto& t : tasks)
    if (t.any)
      lines.push_back(fmt::format("  {:<{}}  input {}  output {}", t.task,
                                  width, watermark_text(t.input),
                                  watermark_text(t.output)));
  return lines;
}

} // namespace weir::cli
