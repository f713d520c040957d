#pragma once

// What a TaskExecutor holds for jobs: the subtasks it runs and the
// JobMasters its slots are offered to. Plain bookkeeping over actor handles
// (any `Handle` with an `address()`), so unit tests use stand-ins.

#include <map>
#include <optional>
#include <set>
#include <utility>
#include <variant>
#include <vector>

#include "actors/common/handle_address.hpp"
#include "messages/ids.hpp"

namespace weir {

/// The subtasks running here, by job, each with what `Info` says of it
/// (the TaskExecutor: its attempt and slot, for a JobMaster taking over).
template <class Handle, class Info = std::monostate>
class running_subtasks {
public:
  using address_type = address_of_t<Handle>;

  void add(const job_id& job, Handle h, Info info = {}) {
    auto addr = h.address();
    by_job_[job].insert(addr);
    by_address_.emplace(addr, entry{job, std::move(h), std::move(info)});
  }

  /// The subtask at `addr` ended; false when it was none of these.
  bool ended(const address_type& addr) {
    auto i = by_address_.find(addr);
    if (i == by_address_.end())
      return false;
    auto job = i->second.job;
    by_address_.erase(i);
    if (auto j = by_job_.find(job); j != by_job_.end()) {
      j->second.erase(addr);
      if (j->second.empty())
        by_job_.erase(j);
    }
    return true;
  }

  /// What is known of the subtask at `addr` (null: none of these).
  const Info* info(const address_type& addr) const {
    auto i = by_address_.find(addr);
    return i == by_address_.end() ? nullptr : &i->second.info;
  }

  /// The subtasks of `job`.
  std::vector<Handle> of(const job_id& job) const {
    std::vector<Handle> out;
    if (auto j = by_job_.find(job); j != by_job_.end())
      for (auto& addr : j->second)
        out.push_back(by_address_.at(addr).handle);
    return out;
  }

  /// What is known of each subtask of `job`.
  std::vector<Info> info_of(const job_id& job) const {
    std::vector<Info> out;
    if (auto j = by_job_.find(job); j != by_job_.end())
      for (auto& addr : j->second)
        out.push_back(by_address_.at(addr).info);
    return out;
  }

  /// Every subtask.
  std::vector<Handle> all() const {
    std::vector<Handle> out;
    for (auto& [addr, e] : by_address_)
      out.push_back(e.handle);
    return out;
  }

  /// Calls `f(handle, info)` for every subtask.
  template <class F>
  void each(F&& f) const {
    for (auto& [addr, e] : by_address_)
      f(e.handle, e.info);
  }

  /// Calls `f(job, handle, info)` for every subtask.
  template <class F>
  void each_with_job(F&& f) const {
    for (auto& [addr, e] : by_address_)
      f(e.job, e.handle, e.info);
  }

  size_t size() const { return by_address_.size(); }

private:
  struct entry {
    job_id job;
    Handle handle;
    Info info;
  };

  std::map<job_id, std::set<address_type>> by_job_;
  std::map<address_type, entry> by_address_;
};

/// The JobMasters that hold slots here, by address, with their job and
/// fencing token (watched: a JobMaster that is gone leaves no slot booked
/// and no subtask running).
template <class Address>
class slot_holders {
public:
  struct holder {
    job_id job;
    job_master_id leader;
  };

  /// `addr` leads `job` as `leader` and holds slots here; true when it was
  /// not watched before.
  bool hold(const Address& addr, const job_id& job,
            const job_master_id& leader) {
    return by_address_.emplace(addr, holder{job, leader}).second;
  }

  /// The JobMaster at `addr` is gone: what it held, forgotten; nothing when
  /// it held no slots here.
  std::optional<holder> gone(const Address& addr) {
    auto i = by_address_.find(addr);
    if (i == by_address_.end())
      return std::nullopt;
    auto out = i->second;
    by_address_.erase(i);
    return out;
  }

  /// Whether a JobMaster of `job` other than `leader` holds slots here (a
  /// newer one: it deploys only after its predecessor is gone).
  bool newer_than(const job_id& job, const job_master_id& leader) const {
    for (auto& [addr, h] : by_address_)
      if (h.job == job && h.leader != leader)
        return true;
    return false;
  }

private:
  std::map<Address, holder> by_address_;
};

} // namespace weir
