#include "actors/job_master/checkpoint_coordinator.hpp"

#include "config/config.hpp"
#include "config/keys.hpp"
#include "storage/state_handle.hpp"

namespace weir {

checkpoint_options checkpoint_options::from(const configuration& cfg) {
  checkpoint_options c;
  c.interval = cfg.get(keys::checkpoint_interval);
  c.timeout = cfg.get(keys::checkpoint_timeout);
  c.max_concurrent = static_cast<int32_t>(
    cfg.get(keys::max_concurrent_checkpoints));
  c.min_pause = cfg.get(keys::checkpoint_min_pause);
  c.retained = static_cast<int32_t>(
    cfg.get(keys::checkpoints_retained));
  return c;
}

checkpoint_coordinator::checkpoint_coordinator(checkpoint_options opts,
                                               int32_t subtasks)
  : opts_(opts), subtasks_(subtasks) {
}

std::optional<int64_t> checkpoint_coordinator::trigger(clock::time_point now,
                                                       bool forced) {
  if (!forced && static_cast<int32_t>(pending_.size()) >= opts_.max_concurrent)
    return std::nullopt;
  if (!forced && last_completed_ && now - *last_completed_ < opts_.min_pause)
    return std::nullopt;
  auto id = next_id_++;
  auto& p = pending_[id];
  p.started = now;
  p.result.id = id;
  for (int32_t k = 0; k < subtasks_; ++k)
    p.waiting.insert(k);
  return id;
}

std::optional<completed_checkpoint>
checkpoint_coordinator::acknowledge(int64_t id, int32_t flat,
                                    operator_states state,
                                    clock::time_point now) {
  auto i = pending_.find(id);
  if (i == pending_.end() || i->second.waiting.erase(flat) == 0)
    return std::nullopt;
  auto& result = i->second.result;
  for (auto& [vertex, bytes] : state)
    result.bytes += storage::state_size(bytes);
  result.states[flat] = std::move(state);
  if (!i->second.waiting.empty())
    return std::nullopt;
  result.duration = std::chrono::duration_cast<std::chrono::milliseconds>(
    now - i->second.started);
  auto done = std::move(result);
  // Older pending checkpoints are subsumed by this one.
  pending_.erase(pending_.begin(), std::next(i));
  last_completed_ = now;
  return done;
}

void checkpoint_coordinator::confirm(completed_checkpoint cp) {
  if (!completed_.empty() && completed_.back().id >= cp.id)
    return;
  completed_.push_back(std::move(cp));
  while (static_cast<int32_t>(completed_.size()) > std::max(1, opts_.retained))
    completed_.pop_front();
}

std::vector<int64_t> checkpoint_coordinator::expire(clock::time_point now) {
  std::vector<int64_t> result;
  for (auto i = pending_.begin(); i != pending_.end();) {
    if (now - i->second.started > opts_.timeout) {
      result.push_back(i->first);
      i = pending_.erase(i);
    } else {
      ++i;
    }
  }
  return result;
}

void checkpoint_coordinator::restore(completed_checkpoint cp) {
  next_id_ = std::max(next_id_, cp.id + 1);
  completed_.push_back(std::move(cp));
}

void checkpoint_coordinator::rescale(
  int32_t subtasks, std::optional<completed_checkpoint> latest) {
  pending_.clear();
  subtasks_ = subtasks;
  completed_.clear();
  if (latest) {
    next_id_ = std::max(next_id_, latest->id + 1);
    completed_.push_back(std::move(*latest));
  }
}

void checkpoint_coordinator::abort_pending() {
  pending_.clear();
}

const completed_checkpoint* checkpoint_coordinator::latest() const {
  return completed_.empty() ? nullptr : &completed_.back();
}

} // namespace weir
