#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "messages/ids.hpp"
#include "messages/slots.hpp"

namespace weir {

/// A TaskExecutor's slots and who holds them. Plain class.
///
///   FREE --allocate--> ALLOCATED --activate (JobMaster accepted)--> ACTIVE
///     ^                    |                                         |
///     +------- free -------+------------------ free -----------------+
///     |                    |                                         |
///     +--- free --- RELEASING <--- free_job, free_leader ------------+
///
/// A released slot stays taken (RELEASING: reported as its job's, no
/// deployments into it) until the TaskExecutor frees it, once the subtasks
/// that ran in it have ended: no slot holds two jobs' subtasks, as in
/// Flink (found by weir-sim, docs/simulation.md § What the seeds found).
class slot_table {
public:
  enum class slot_state { free, allocated, active, releasing };

  slot_table(int32_t slots, resource_profile per_slot);

  /// The slots as sent to the ResourceManager.
  slot_report report() const;

  /// Reserves slot `index` for `alloc` of `job`. Returns "" or why not.
  std::string allocate(int32_t index, allocation_id alloc, job_id job,
                       job_master_id leader);

  /// The JobMaster accepted the offer of `alloc`.
  bool activate(allocation_id alloc);

  /// Whether `alloc` is held by `job` under the leader `leader`.
  bool owned_by(allocation_id alloc, job_id job, job_master_id leader) const;

  /// Frees `alloc`; false when no slot holds it.
  bool free(allocation_id alloc);

  /// Releases every slot of `job` (RELEASING until `free`) and returns
  /// their allocations.
  std::vector<allocation_id> free_job(job_id job);

  /// Releases the slots of `job` held under `leader` (a JobMaster that is
  /// gone; RELEASING until `free`) and returns their allocations.
  std::vector<allocation_id> free_leader(job_id job, job_master_id leader);

  /// Whether `alloc`'s slot is being released.
  bool releasing(allocation_id alloc) const;

  /// Releases `alloc`'s slot (RELEASING until `free`); false when no slot
  /// holds it.
  bool release_later(allocation_id alloc);

  /// A JobMaster that took over `job` after a failover holds every slot
  /// of it now, as `leader` (its predecessor is fenced); their number.
  int32_t reown(job_id job, job_master_id leader);
  /// Whether some slot of `job` is held under `leader`.
  bool holds(job_id job, job_master_id leader) const;
  /// The job whose slot holds `alloc` (none: no slot does).
  std::optional<job_id> job_of(allocation_id alloc) const;
  int32_t size() const { return static_cast<int32_t>(slots_.size()); }
  int32_t free_count() const;
  const resource_profile& profile(int32_t index) const;

private:
  struct slot {
    resource_profile profile;
    slot_state state = slot_state::free;
    allocation_id alloc;
    job_id job;
    job_master_id leader;
  };

  /// Allocated or active: held for its job, not on its way out.
  static bool held(const slot& s) {
    return s.state == slot_state::allocated || s.state == slot_state::active;
  }

  slot* find(allocation_id alloc);
  const slot* find(allocation_id alloc) const;

  void release(slot& s);

  std::vector<slot> slots_;
  std::unordered_map<allocation_id, size_t> by_alloc_;
};

} // namespace weir
