#include "actors/task_executor/task_metrics.hpp"

namespace weir {

task_metrics::task_metrics(std::chrono::milliseconds keep_ended)
  : keep_ended_(keep_ended) {
}

void task_metrics::update(const subtask_labels& labels,
                          const io_metrics& metrics, bool ended,
                          clock::time_point now) {
  std::lock_guard<std::mutex> guard{mtx_};
  key k{labels.job, labels.task_index, labels.subtask_index};
  auto i = subtasks_.find(k);
  if (i != subtasks_.end()) {
    auto& kept = i->second.sample;
    if (labels.attempt_number < kept.labels.attempt_number)
      return;
    // An ended attempt's final report is not overwritten by its own late
    // periodic one.
    if (kept.ended && labels.attempt_number == kept.labels.attempt_number)
      return;
  }
  auto& e = subtasks_[k];
  e.sample = subtask_sample{labels, metrics, ended};
  if (ended) {
    e.ended_at = now;
    // Without scrapes (no endpoint), ended subtasks go here.
    prune(now);
  }
}

void task_metrics::prune(clock::time_point now) {
  for (auto i = subtasks_.begin(); i != subtasks_.end();)
    if (i->second.sample.ended && now - i->second.ended_at > keep_ended_)
      i = subtasks_.erase(i);
    else
      ++i;
}

void task_metrics::set_slots(int32_t total, int32_t free) {
  std::lock_guard<std::mutex> guard{mtx_};
  slots_total_ = total;
  slots_free_ = free;
}

task_metrics::snapshot task_metrics::read(clock::time_point now) {
  std::lock_guard<std::mutex> guard{mtx_};
  snapshot out;
  out.slots_total = slots_total_;
  out.slots_free = slots_free_;
  prune(now);
  for (auto& [k, e] : subtasks_)
    out.subtasks.push_back(e.sample);
  return out;
}

} // namespace weir
