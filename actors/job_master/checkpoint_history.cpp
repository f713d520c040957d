#include "actors/job_master/checkpoint_history.hpp"

#include <algorithm>

namespace weir {

namespace {

const std::string in_progress = "IN_PROGRESS";

} // namespace

checkpoint_entry* checkpoint_history::find(int64_t id) {
  for (auto& e : entries_)
    if (e.id == id)
      return &e;
  return nullptr;
}

void checkpoint_history::triggered(int64_t id, bool savepoint,
                                   int32_t subtasks, int64_t now_ms) {
  checkpoint_entry e;
  e.id = id;
  e.status = in_progress;
  e.savepoint = savepoint;
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
                                      int64_t now_ms) {
  if (auto* e = find(id); e != nullptr && e->status == in_progress) {
    ++e->acknowledged;
    e->alignment_ms = std::max(e->alignment_ms, alignment_ms);
    e->latest_ack_time_ms = now_ms;
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
}

void checkpoint_history::failed(int64_t id, const std::string& why,
                                int64_t now_ms) {
  auto* e = find(id);
  if (e == nullptr || e->status != in_progress)
    return;
  e->status = "FAILED";
  e->failure = why;
  e->duration_ms = now_ms - e->trigger_time_ms;
  --counts_.in_progress;
  ++counts_.failed;
}

void checkpoint_history::fail_pending(const std::string& why, int64_t now_ms) {
  for (auto& e : entries_)
    if (e.status == in_progress)
      failed(e.id, why, now_ms);
}

void checkpoint_history::restored(int64_t id, int64_t now_ms) {
  ++counts_.restored;
  counts_.restored_id = id;
  counts_.restore_time_ms = now_ms;
}

checkpoint_stats checkpoint_history::stats(int64_t now_ms) const {
  auto out = counts_;
  out.history.assign(entries_.rbegin(), entries_.rend());
  for (auto& e : out.history)
    if (e.status == in_progress)
      e.duration_ms = now_ms - e.trigger_time_ms;
  return out;
}

} // namespace weir
