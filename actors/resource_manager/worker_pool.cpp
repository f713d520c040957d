#include "actors/resource_manager/worker_pool.hpp"

#include <fmt/format.h>

namespace weir {

worker_pool::worker_pool(worker_pool_options opts) : opts_(opts) {
}

bool worker_pool::throttled(clock::time_point now) {
  while (!failures_.empty() && now - failures_.front() >= std::chrono::minutes(1))
    failures_.pop_front();
  return static_cast<int32_t>(failures_.size()) >= opts_.max_failures_per_minute;
}

std::vector<worker_pool::start_order>
worker_pool::plan(const std::vector<resource_profile>& pending,
                  clock::time_point now) {
  std::vector<start_order> orders;
  if (pending.empty() || throttled(now))
    return orders;
  // Slots that workers still starting will bring.
  std::vector<std::pair<resource_profile, int32_t>> coming;
  for (auto& [id, w] : workers_)
    if (!w.registered && !w.stopping)
      coming.emplace_back(w.slot_profile, w.slots);
  for (auto& want : pending) {
    bool covered = false;
    for (auto& [profile, free] : coming)
      if (free > 0 && profile.satisfies(want)) {
        --free;
        covered = true;
        break;
      }
    if (covered)
      continue;
    start_order o;
    o.id = resource_id{fmt::format("worker-{}", next_++)};
    bool profiled = !(want == resource_profile{});
    o.slots = profiled ? 1 : opts_.slots_per_worker;
    o.slot_profile = want;
    workers_[o.id] = worker{o.slots, o.slot_profile, false, false, now};
    coming.emplace_back(o.slot_profile, o.slots - 1);
    orders.push_back(std::move(o));
  }
  return orders;
}

void worker_pool::registered(const resource_id& id, clock::time_point now) {
  if (auto i = workers_.find(id); i != workers_.end()) {
    i->second.registered = true;
    i->second.idle_since = now;
  }
}

void worker_pool::exited(const resource_id& id, clock::time_point now) {
  auto i = workers_.find(id);
  if (i == workers_.end())
    return;
  if (!i->second.registered && !i->second.stopping)
    failures_.push_back(now);
  workers_.erase(i);
}

} // namespace weir
