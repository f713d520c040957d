#pragma once

// Who the ResourceManager knows: the TaskExecutors registered with it and
// the JobMaster leading each job. Plain bookkeeping over actor handles (any
// `Handle` with an `address()`), so unit tests use stand-ins.

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "actors/common/handle_address.hpp"
#include "messages/ids.hpp"
#include "messages/slots.hpp"

namespace weir {

/// The registered TaskExecutors by id, and by the address of their current
/// registration (a re-registration under the same id replaces the old one).
template <class Handle>
class registered_workers {
public:
  using address_type = address_of_t<Handle>;

  struct worker {
    Handle handle;
    /// The host it registered with.
    hardware_description hardware;
    /// Its data port (port 0: none).
    data_endpoint data;
  };

  /// Registers `id` at `handle`.
  void add(const resource_id& id, Handle handle, hardware_description hw,
           data_endpoint data = {}) {
    if (auto old = by_id_.find(id); old != by_id_.end())
      by_address_.erase(old->second.handle.address());
    by_address_[handle.address()] = id;
    by_id_[id] = worker{std::move(handle), std::move(hw), std::move(data)};
  }

  const worker* find(const resource_id& id) const {
    auto i = by_id_.find(id);
    return i == by_id_.end() ? nullptr : &i->second;
  }

  /// The worker whose current registration is at `addr`.
  std::optional<resource_id> at(const address_type& addr) const {
    auto i = by_address_.find(addr);
    if (i == by_address_.end())
      return std::nullopt;
    return i->second;
  }

  /// Forgets worker `id`; false when it was not registered.
  bool remove(const resource_id& id) {
    auto i = by_id_.find(id);
    if (i == by_id_.end())
      return false;
    by_address_.erase(i->second.handle.address());
    by_id_.erase(i);
    return true;
  }

  const std::map<resource_id, worker>& all() const { return by_id_; }

private:
  std::map<resource_id, worker> by_id_;
  std::map<address_type, resource_id> by_address_;
};

/// The JobMaster leading each job (its handle and fencing token), every
/// JobMaster watched since it first asked for slots, and what each leader
/// was last told of its unmet requests.
template <class Handle>
class job_leaders {
public:
  using address_type = address_of_t<Handle>;

  struct leader {
    Handle jm;
    job_master_id id;
  };

  /// `jm` leads `job` as `id` from now on; true when it was not watched
  /// before (the ResourceManager then monitors it and expects heartbeats).
  bool lead(const job_id& job, const job_master_id& id, Handle jm) {
    bool fresh = watched_.emplace(jm.address(), job).second;
    leaders_[job] = leader{std::move(jm), id};
    return fresh;
  }

  const leader* find(const job_id& job) const {
    auto i = leaders_.find(job);
    return i == leaders_.end() ? nullptr : &i->second;
  }

  /// Whether a JobMaster leading as `id` must wait for another of the job
  /// to end first (the job has a leader with another token).
  bool led_by_other(const job_id& job, const job_master_id& id) const {
    auto* l = find(job);
    return l != nullptr && l->id != id;
  }

  /// What ended when the actor at `addr` ended.
  struct ending {
    /// It was a watched JobMaster (no longer watched).
    bool job_master = false;
    /// It led this job, which has no leader now.
    std::optional<job_id> led;
  };

  ending ended(const address_type& addr) {
    ending out;
    auto w = watched_.find(addr);
    if (w == watched_.end())
      return out;
    out.job_master = true;
    auto job = w->second;
    watched_.erase(w);
    if (auto l = leaders_.find(job);
        l != leaders_.end() && l->second.jm.address() == addr) {
      forget(job);
      out.led = job;
    }
    return out;
  }

  /// Leader `id` of `job` gives up its slots; false when it does not lead
  /// the job.
  bool disconnect(const job_id& job, const job_master_id& id) {
    auto* l = find(job);
    if (l == nullptr || l->id != id)
      return false;
    forget(job);
    return true;
  }

  /// Records that the job's leader is told `why` of its unmet requests;
  /// false when that is what it was told last.
  bool tell_unmet(const job_id& job, const std::string& why) {
    auto& told = told_unmet_[job];
    if (told == why)
      return false;
    told = why;
    return true;
  }

  const std::map<job_id, leader>& all() const { return leaders_; }

private:
  void forget(const job_id& job) {
    leaders_.erase(job);
    told_unmet_.erase(job);
  }

  std::map<job_id, leader> leaders_;
  std::map<address_type, job_id> watched_;
  std::map<job_id, std::string> told_unmet_;
};

} // namespace weir
