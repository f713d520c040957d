#include "actors/task_executor/slot_table.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace weir {

slot_table::slot_table(int32_t slots, resource_profile per_slot) {
  slots_.resize(static_cast<size_t>(slots));
  for (auto& s : slots_)
    s.profile = per_slot;
}

slot_report slot_table::report() const {
  slot_report result;
  for (size_t i = 0; i < slots_.size(); ++i) {
    auto& s = slots_[i];
    result.slots.push_back(
      slot_status{static_cast<int32_t>(i), s.profile, s.alloc, s.job});
  }
  return result;
}

std::string slot_table::allocate(int32_t index, allocation_id alloc,
                                 job_id job, job_master_id leader) {
  if (index < 0 || index >= size())
    return fmt::format("no slot {}", index);
  auto held = by_alloc_.find(alloc);
  if (held != by_alloc_.end() && held->second != static_cast<size_t>(index))
    return fmt::format("allocation {} already holds slot {}", alloc.to_string(),
                       held->second);
  auto& s = slots_[static_cast<size_t>(index)];
  if (s.state != slot_state::free)
    return s.alloc == alloc ? std::string{}
                            : fmt::format("slot {} is already allocated", index);
  s.state = slot_state::allocated;
  s.alloc = alloc;
  s.job = job;
  s.leader = leader;
  by_alloc_[alloc] = static_cast<size_t>(index);
  return {};
}

bool slot_table::activate(allocation_id alloc) {
  auto* s = find(alloc);
  if (s == nullptr || s->state == slot_state::releasing)
    return false;
  s->state = slot_state::active;
  return true;
}

bool slot_table::owned_by(allocation_id alloc, job_id job,
                          job_master_id leader) const {
  auto* s = find(alloc);
  return s != nullptr && s->state != slot_state::releasing && s->job == job
         && s->leader == leader;
}

bool slot_table::release_later(allocation_id alloc) {
  auto* s = find(alloc);
  if (s == nullptr)
    return false;
  s->state = slot_state::releasing;
  return true;
}

bool slot_table::releasing(allocation_id alloc) const {
  auto* s = find(alloc);
  return s != nullptr && s->state == slot_state::releasing;
}

bool slot_table::free(allocation_id alloc) {
  auto* s = find(alloc);
  if (s == nullptr)
    return false;
  release(*s);
  return true;
}

std::vector<allocation_id> slot_table::free_job(job_id job) {
  std::vector<allocation_id> result;
  for (auto& s : slots_) {
    if (held(s) && s.job == job) {
      result.push_back(s.alloc);
      s.state = slot_state::releasing;
    }
  }
  return result;
}

std::vector<allocation_id> slot_table::free_leader(job_id job,
                                                   job_master_id leader) {
  std::vector<allocation_id> result;
  for (auto& s : slots_) {
    if (held(s) && s.job == job && s.leader == leader) {
      result.push_back(s.alloc);
      s.state = slot_state::releasing;
    }
  }
  return result;
}

int32_t slot_table::reown(job_id job, job_master_id leader) {
  int32_t n = 0;
  for (auto& s : slots_)
    if (held(s) && s.job == job) {
      s.leader = leader;
      ++n;
    }
  return n;
}

bool slot_table::holds(job_id job, job_master_id leader) const {
  return std::any_of(slots_.begin(), slots_.end(), [&](const slot& s) {
    return held(s) && s.job == job && s.leader == leader;
  });
}

int32_t slot_table::free_count() const {
  int32_t n = 0;
  for (auto& s : slots_)
    if (s.state == slot_state::free)
      ++n;
  return n;
}

const resource_profile& slot_table::profile(int32_t index) const {
  return slots_[static_cast<size_t>(index)].profile;
}

void slot_table::release(slot& s) {
  by_alloc_.erase(s.alloc);
  s = slot{s.profile, slot_state::free, {}, {}, {}};
}

slot_table::slot* slot_table::find(allocation_id alloc) {
  auto i = by_alloc_.find(alloc);
  return i == by_alloc_.end() ? nullptr : &slots_[i->second];
}

const slot_table::slot* slot_table::find(allocation_id alloc) const {
  return const_cast<slot_table*>(this)->find(alloc);
}

std::optional<job_id> slot_table::job_of(allocation_id alloc) const {
  if (auto s = find(alloc))
    return s->job;
  return std::nullopt;
}

} // namespace weir
