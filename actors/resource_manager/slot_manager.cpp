#include "actors/resource_manager/slot_manager.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace weir {

slot_manager::slot_manager(bool spread_out) : spread_out_(spread_out) {
  // nop
}

void slot_manager::register_task_executor(const resource_id& id,
                                          const slot_report& report) {
  unregister_task_executor(id);
  worker w;
  w.id = id;
  for (auto& s : report.slots) {
    w.slots.push_back(slot{s.profile, s.alloc, s.job, s.alloc.valid()});
    if (!s.alloc.valid())
      ++w.free;
  }
  workers_.push_back(std::move(w));
}

std::vector<allocation_id>
slot_manager::unregister_task_executor(const resource_id& id) {
  std::vector<allocation_id> lost;
  auto i = std::find_if(workers_.begin(), workers_.end(),
                        [&](const worker& w) { return w.id == id; });
  if (i == workers_.end())
    return lost;
  for (auto& s : i->slots)
    if (s.alloc.valid())
      lost.push_back(s.alloc);
  workers_.erase(i);
  return lost;
}

std::vector<std::pair<resource_id, int32_t>>
slot_manager::holders_of(job_id job) const {
  std::vector<std::pair<resource_id, int32_t>> out;
  for (auto& w : workers_) {
    auto n = std::count_if(w.slots.begin(), w.slots.end(), [&](const slot& s) {
      return s.alloc.valid() && s.job == job;
    });
    if (n > 0)
      out.emplace_back(w.id, static_cast<int32_t>(n));
  }
  return out;
}

std::vector<resource_id> slot_manager::free_kept(job_id job) {
  std::vector<resource_id> out;
  for (auto& w : workers_) {
    bool any = false;
    for (size_t k = 0; k < w.slots.size(); ++k) {
      auto& s = w.slots[k];
      if (!s.kept || !s.alloc.valid() || !(s.job == job))
        continue;
      // Still booked: the TaskExecutor gives the slot back (free_slot)
      // once the subtasks canceled in it have ended.
      s.kept = false;
      any = true;
    }
    if (any)
      out.push_back(w.id);
  }
  return out;
}

bool slot_manager::is_registered(const resource_id& id) const {
  return std::any_of(workers_.begin(), workers_.end(),
                     [&](const worker& w) { return w.id == id; });
}

void slot_manager::add_requests(job_id job,
                                const std::vector<slot_request>& requests) {
  for (auto& r : requests)
    pending_.push_back(pending{job, r});
}

void slot_manager::remove_job(job_id job) {
  pending_.erase(std::remove_if(pending_.begin(), pending_.end(),
                                [&](const pending& p) { return p.job == job; }),
                 pending_.end());
}

slot_manager::worker* slot_manager::pick(const resource_profile& wanted,
                                         int32_t& index) {
  worker* best = nullptr;
  int32_t best_index = -1;
  for (auto& w : workers_) {
    if (w.free == 0 || (best != nullptr && w.free <= best->free))
      continue;
    auto i = take_slot(w, wanted);
    if (i < 0)
      continue;
    best = &w;
    best_index = i;
    if (!spread_out_)
      break;
  }
  index = best_index;
  return best;
}

int32_t slot_manager::take_slot(worker& w, const resource_profile& wanted) {
  for (size_t i = w.next_free; i < w.slots.size(); ++i) {
    auto& s = w.slots[i];
    if (!s.alloc.valid() && s.profile.satisfies(wanted))
      return static_cast<int32_t>(i);
    if (i == w.next_free && s.alloc.valid())
      w.next_free = i + 1;
  }
  return -1;
}

std::vector<slot_manager::assignment> slot_manager::match() {
  // Jobs in the order of their first pending request. A job gets all of its
  // pending requests or none: its subtasks share slots and need all of them,
  // and a job holding part of the slots could starve another forever.
  std::vector<job_id> order;
  std::map<job_id, std::vector<pending>> by_job;
  for (auto& p : pending_) {
    auto& list = by_job[p.job];
    if (list.empty())
      order.push_back(p.job);
    list.push_back(std::move(p));
  }
  pending_.clear();
  std::vector<assignment> result;
  for (auto& job : order) {
    auto& requests = by_job[job];
    std::vector<assignment> taken;
    for (auto& p : requests) {
      int32_t index = -1;
      auto* w = pick(p.request.profile, index);
      if (w == nullptr)
        break;
      w->slots[static_cast<size_t>(index)].alloc = p.request.alloc;
      w->slots[static_cast<size_t>(index)].job = p.job;
      --w->free;
      if (static_cast<size_t>(index) == w->next_free)
        w->next_free = static_cast<size_t>(index) + 1;
      taken.push_back(assignment{w->id, p.job, p.request.alloc, index});
    }
    if (taken.size() == requests.size()) {
      result.insert(result.end(), taken.begin(), taken.end());
      continue;
    }
    for (auto& a : taken)
      free_slot(a.task_executor, a.alloc);
    for (auto& p : requests)
      pending_.push_back(std::move(p));
  }
  return result;
}

void slot_manager::free_slot(const resource_id& id, allocation_id alloc) {
  if (!alloc.valid())
    return; // a nil id would match every free slot
  for (auto& w : workers_) {
    if (w.id != id)
      continue;
    for (size_t i = 0; i < w.slots.size(); ++i) {
      if (w.slots[i].alloc == alloc) {
        w.slots[i].alloc = {};
        w.slots[i].job = {};
        w.slots[i].kept = false;
        ++w.free;
        w.next_free = std::min(w.next_free, i);
      }
    }
  }
}

std::vector<resource_profile> slot_manager::pending_profiles() const {
  std::vector<resource_profile> out;
  for (auto& p : pending_)
    out.push_back(p.request.profile);
  return out;
}

bool slot_manager::is_idle(const resource_id& id) const {
  for (auto& w : workers_)
    if (w.id == id)
      return w.free == static_cast<int32_t>(w.slots.size());
  return false;
}

bool slot_manager::serves_pending(const resource_id& id) const {
  for (auto& w : workers_) {
    if (w.id != id)
      continue;
    for (auto& s : w.slots)
      if (!s.alloc.valid())
        for (auto& p : pending_)
          if (s.profile.satisfies(p.request.profile))
            return true;
  }
  return false;
}

std::vector<slot_manager::worker_slots> slot_manager::task_executors() const {
  std::vector<worker_slots> out;
  out.reserve(workers_.size());
  for (auto& w : workers_) {
    worker_slots x{w.id, static_cast<int32_t>(w.slots.size()), w.free, {}};
    for (size_t i = 0; i < w.slots.size(); ++i)
      x.slots.push_back(slot_status{static_cast<int32_t>(i),
                                    w.slots[i].profile, w.slots[i].alloc,
                                    w.slots[i].job});
    out.push_back(std::move(x));
  }
  return out;
}

int32_t slot_manager::task_executor_count() const {
  return static_cast<int32_t>(workers_.size());
}

int32_t slot_manager::slot_count() const {
  int32_t n = 0;
  for (auto& w : workers_)
    n += static_cast<int32_t>(w.slots.size());
  return n;
}

int32_t slot_manager::free_slot_count() const {
  int32_t n = 0;
  for (auto& w : workers_)
    n += w.free;
  return n;
}

int32_t slot_manager::slots_for(job_id job,
                                const std::vector<resource_id>& excluded) const {
  int32_t n = 0;
  for (auto& w : workers_) {
    if (std::find(excluded.begin(), excluded.end(), w.id) != excluded.end())
      continue;
    for (auto& s : w.slots)
      if (!s.alloc.valid() || s.job == job)
        ++n;
  }
  return n;
}

int32_t slot_manager::pending_count() const {
  return static_cast<int32_t>(pending_.size());
}

} // namespace weir

namespace weir {

std::string slot_manager::why_unmet(job_id job) const {
  int32_t wanted = 0;
  const resource_profile* profile = nullptr;
  for (auto& p : pending_)
    if (p.job == job) {
      ++wanted;
      if (profile == nullptr)
        profile = &p.request.profile;
    }
  if (wanted == 0)
    return {};
  if (workers_.empty())
    return "no TaskExecutor is registered";
  int32_t free = 0;
  int32_t fitting = 0;
  for (auto& w : workers_)
    for (auto& s : w.slots)
      if (!s.alloc.valid()) {
        ++free;
        if (s.profile.satisfies(*profile))
          ++fitting;
      }
  auto total = slot_count();
  if (free == 0)
    return fmt::format("all {} slots of {} TaskExecutor{} are taken", total,
                       workers_.size(), workers_.size() == 1 ? "" : "s");
  if (fitting == 0)
    return fmt::format("none of the {} free slots fits the slot profile {}",
                       free, to_string(*profile));
  return fmt::format("{} free slot{} fit{}; the job needs {} at once", fitting,
                     fitting == 1 ? "" : "s", fitting == 1 ? "s" : "",
                     wanted);
}

std::vector<job_id> slot_manager::waiting_jobs() const {
  std::vector<job_id> out;
  for (auto& p : pending_)
    if (std::find(out.begin(), out.end(), p.job) == out.end())
      out.push_back(p.job);
  return out;
}

} // namespace weir
