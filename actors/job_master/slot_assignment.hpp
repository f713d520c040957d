#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "messages/ids.hpp"
#include "messages/slots.hpp"

namespace weir {

/// The JobMaster's view of its job's shared slots (slot k holds subtask k of
/// every task): which allocations it asked the ResourceManager for, and
/// which TaskExecutor holds each slot after accepting its offer. Plain
/// class; `Executor` identifies a TaskExecutor (the JobMaster uses its
/// `caf::actor_addr`, tests an int) and needs `==`.
template <class Executor>
class slot_assignment {
public:
  /// An accepted shared slot and the allocation it came with.
  using placed_slot = std::pair<int32_t, allocation_id>;

  /// The outcome of an offer.
  struct accepted {
    /// The offered allocations the job asked for (the reply to the offer).
    std::vector<allocation_id> allocations;
    /// Their shared slots, to deploy now.
    std::vector<placed_slot> slots;
  };

  /// What went with a lost TaskExecutor.
  struct lost {
    /// Its name (empty when it held no slot).
    std::string name;
    /// The shared slots it held.
    std::vector<int32_t> slots;
  };

  explicit slot_assignment(int32_t slots)
    : holders_(static_cast<size_t>(slots)) {
  }

  /// The number of shared slots.
  int32_t size() const { return static_cast<int32_t>(holders_.size()); }

  /// Allocations asked for and not yet offered.
  size_t pending() const { return pending_.size(); }

  /// A fresh allocation for every shared slot, now pending.
  std::vector<slot_request> request_all(const resource_profile& profile) {
    std::vector<slot_request> out;
    for (int32_t k = 0; k < size(); ++k)
      out.push_back(make_pending(k, profile));
    return out;
  }

  /// TaskExecutor `te` (called `name`) offers `offers`: those the job asked
  /// for are accepted and `te` holds their slots.
  accepted accept(const Executor& te, const std::string& name,
                  const std::vector<slot_offer>& offers) {
    accepted out;
    for (auto& o : offers) {
      auto i = pending_.find(o.alloc);
      if (i == pending_.end())
        continue;
      out.allocations.push_back(o.alloc);
      out.slots.emplace_back(i->second, o.alloc);
      holders_[static_cast<size_t>(i->second)] = holder{te, name};
      pending_.erase(i);
    }
    return out;
  }

  /// Shared slot `slot` is held by `te` (called `name`): its subtasks,
  /// which a JobMaster before this one deployed, were adopted.
  void adopt(int32_t slot, const Executor& te, const std::string& name) {
    holders_[static_cast<size_t>(slot)] = holder{te, name};
  }

  /// Allocations died before they were offered: a replacement request for
  /// each one still pending (others were offered or are not the job's).
  std::vector<slot_request> replace(const std::vector<allocation_id>& dead,
                                    const resource_profile& profile) {
    std::vector<slot_request> out;
    for (auto& a : dead) {
      auto i = pending_.find(a);
      if (i == pending_.end())
        continue;
      auto slot = i->second;
      pending_.erase(i);
      out.push_back(make_pending(slot, profile));
    }
    return out;
  }

  /// TaskExecutor `te` is gone: the slots it held are no longer held.
  lost lose_executor(const Executor& te) {
    lost out;
    for (size_t k = 0; k < holders_.size(); ++k) {
      auto& h = holders_[k];
      if (!h.executor || !(*h.executor == te))
        continue;
      out.name = h.name;
      out.slots.push_back(static_cast<int32_t>(k));
      h.executor.reset();
    }
    return out;
  }

  /// Every TaskExecutor holding a slot of the job, once each.
  std::vector<Executor> executors() const {
    std::vector<Executor> out;
    for (auto& h : holders_)
      if (h.executor
          && std::find(out.begin(), out.end(), *h.executor) == out.end())
        out.push_back(*h.executor);
    return out;
  }

  /// The name of the TaskExecutor that holds or held `slot` this round
  /// (empty: none yet).
  const std::string& executor_name(int32_t slot) const {
    return holders_[static_cast<size_t>(slot)].name;
  }

  /// A new scheduling round: nothing pending, no slot held.
  void reset() {
    pending_.clear();
    holders_.assign(holders_.size(), holder{});
  }

private:
  struct holder {
    std::optional<Executor> executor;
    std::string name;
  };

  slot_request make_pending(int32_t slot, const resource_profile& profile) {
    auto alloc = allocation_id::random();
    pending_.emplace(alloc, slot);
    return slot_request{alloc, profile};
  }

  /// Allocation → shared slot.
  std::map<allocation_id, int32_t> pending_;
  /// By shared slot.
  std::vector<holder> holders_;
};

} // namespace weir
