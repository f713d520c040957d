#include "actors/job_master/checkpoint_history.hpp"

#include <algorithm>

namespace weir {

namespace {

const std::string in_progress = "IN_PROGRESS";

/// Flink's StatsSummaryDto: percentiles over `window` (the newest
/// values), the extremes and average over all (`all`, `sum`, `count`).
stats_summary summarize_all(const std::deque<int64_t>& window, stats_summary all,
                            int64_t sum, int64_t count) {
  if (count == 0)
    return {};
  auto out = summarize({window.begin(), window.end()});
  out.min = all.min;
  out.max = all.max;
  out.avg = sum / count;
  return out;
}

void extend(stats_summary& s, int64_t value, bool first) {
  s.min = first ? value : std::min(s.min, value);
  s.max = first ? value : std::max(s.max, value);
}

} // namespace

checkpoint_history::checkpoint_history(int32_t retained)
  : retained_(std::max(1, retained)) {
}

checkpoint_entry* checkpoint_history::find(int64_t id) {
  for (auto& e : entries_)
    if (e.id == id)
      return &e;
  return nullptr;
}

void checkpoint_history::triggered(int64_t id, bool savepoint,
                                   int32_t subtasks, int64_t now_ms,
                                   bool stop) {
  checkpoint_entry e;
  e.id = id;
  e.status = in_progress;
  e.savepoint = savepoint;
  e.stop = stop;
  e.trigger_time_ms = now_ms;
  e.subtasks = subtasks;
  entries_.push_back(std::move(e));
  ++counts_.total;
  ++counts_.in_progress;
  // An entry that falls out of the history is no longer counted in
  // progress: it can no longer end here.
  while (entries_.size() > kept) {
    if (entries_.front().status == in_progress)
      --counts_.in_progress;
    entries_.pop_front();
  }
}

void checkpoint_history::acknowledged(int64_t id, int64_t alignment_ms,
                                      int64_t now_ms, subtask_ack ack) {
  if (auto* e = find(id); e != nullptr && e->status == in_progress) {
    ++e->acknowledged;
    e->alignment_ms = std::max(e->alignment_ms, alignment_ms);
    e->latest_ack_time_ms = now_ms;
    ack.ack_time_ms = now_ms;
    ack.alignment_ms = alignment_ms;
    e->acks.push_back(std::move(ack));
  }
}

void checkpoint_history::completed(int64_t id, int64_t bytes,
                                   int64_t now_ms) {
  auto* e = find(id);
  if (e == nullptr || e->status != in_progress)
    return;
  e->status = "COMPLETED";
  e->state_size = bytes;
  e->duration_ms = now_ms - e->trigger_time_ms;
  e->acknowledged = e->subtasks;
  --counts_.in_progress;
  ++counts_.completed;
  sample(*e);
  if (e->savepoint)
    return; // the newest savepoint once it is written
  counts_.latest_completed = *e;
  // The coordinator keeps the newest `retained_` checkpoints' state.
  int32_t newer = 0;
  for (auto i = entries_.rbegin(); i != entries_.rend(); ++i)
    if (i->status == "COMPLETED" && !i->savepoint && ++newer > retained_)
      i->discarded = true;
}

void checkpoint_history::sample(const checkpoint_entry& e) {
  bool first = samples_++ == 0;
  extend(counts_.state_size, e.state_size, first);
  extend(counts_.duration, e.duration_ms, first);
  size_sum_ += e.state_size;
  duration_sum_ += e.duration_ms;
  sizes_.push_back(e.state_size);
  durations_.push_back(e.duration_ms);
  if (sizes_.size() > sampled) {
    sizes_.pop_front();
    durations_.pop_front();
  }
}

void checkpoint_history::externalized(int64_t id, const std::string& path) {
  if (auto* e = find(id); e != nullptr && e->status == "COMPLETED") {
    e->external_path = path;
    counts_.latest_savepoint = *e;
  }
}

void checkpoint_history::write_failed(int64_t id, const std::string& why,
                                      int64_t now_ms) {
  auto* e = find(id);
  if (e == nullptr || e->status != "COMPLETED")
    return;
  --counts_.completed;
  mark_failed(*e, why, now_ms);
}

void checkpoint_history::failed(int64_t id, const std::string& why,
                                int64_t now_ms) {
  auto* e = find(id);
  if (e == nullptr || e->status != in_progress)
    return;
  --counts_.in_progress;
  mark_failed(*e, why, now_ms);
}

void checkpoint_history::mark_failed(checkpoint_entry& e, const std::string& why,
                                     int64_t now_ms) {
  e.status = "FAILED";
  e.failure = why;
  e.duration_ms = now_ms - e.trigger_time_ms;
  ++counts_.failed;
  counts_.latest_failed = e;
}

void checkpoint_history::fail_pending(const std::string& why, int64_t now_ms) {
  for (auto& e : entries_)
    if (e.status == in_progress)
      failed(e.id, why, now_ms);
}

void checkpoint_history::restored(int64_t id, int64_t now_ms,
                                  const std::string& path) {
  ++counts_.restored;
  counts_.restored_id = id;
  counts_.restore_time_ms = now_ms;
  counts_.restored_savepoint = !path.empty();
  counts_.restored_path = path;
}

checkpoint_stats checkpoint_history::stats(int64_t now_ms) const {
  auto out = counts_;
  out.state_size = summarize_all(sizes_, counts_.state_size, size_sum_,
                                 samples_);
  out.duration = summarize_all(durations_, counts_.duration, duration_sum_,
                               samples_);
  out.history.assign(entries_.rbegin(), entries_.rend());
  for (auto& e : out.history)
    if (e.status == in_progress)
      e.duration_ms = now_ms - e.trigger_time_ms;
  return out;
}

} // namespace weir
