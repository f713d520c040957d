#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include "messages/ids.hpp"
#include "messages/slots.hpp"

namespace weir {

/// The ResourceManager's bookkeeping: registered TaskExecutors, their slots,
/// and pending slot requests; matches requests to free slots. Plain class.
///
/// Slot protocol (FLIP-6):
///
///   JobMaster --request slots--> ResourceManager (slot_manager::add_requests)
///   ResourceManager --grant slot--> TaskExecutor    (slot_manager::match)
///   TaskExecutor --offer slot--> JobMaster --accept, deploy--> TaskExecutor
///   TaskExecutor --slot free--> ResourceManager     (slot_manager::free_slot)
class slot_manager {
public:
  /// A pending request matched to a slot.
  struct assignment {
    resource_id task_executor;
    job_id job;
    allocation_id alloc;
    int32_t slot_index = 0;
  };

  /// When true, slots are taken from the TaskExecutor with the most free
  /// slots (Flink's cluster.evenly-spread-out-slots); otherwise the first
  /// registered TaskExecutor with a free slot is filled first.
  explicit slot_manager(bool spread_out = false);

  /// Adds (or replaces) a TaskExecutor and its slots.
  void register_task_executor(const resource_id& id, const slot_report& report);

  /// Removes a TaskExecutor; returns the allocations that died with it.
  std::vector<allocation_id> unregister_task_executor(const resource_id& id);

  bool is_registered(const resource_id& id) const;

  /// Queues slot requests of `job`.
  void add_requests(job_id job, const std::vector<slot_request>& requests);

  /// Drops the pending requests of `job`.
  void remove_job(job_id job);

  /// Matches pending requests to fitting free slots, job by job in request
  /// order: a job gets all of its pending requests matched or none.
  std::vector<assignment> match();

  /// Marks a slot free again.
  void free_slot(const resource_id& id, allocation_id alloc);

  /// Why `job`'s pending requests are not matched ("" when it has none):
  /// no TaskExecutor, every slot taken, or no free slot that fits its
  /// profile, with the numbers.
  std::string why_unmet(job_id job) const;

  /// The jobs with pending requests.
  std::vector<job_id> waiting_jobs() const;

  /// The profiles of the pending (unmatched) requests, in request order.
  std::vector<resource_profile> pending_profiles() const;

  /// Whether TaskExecutor `id` is registered and none of its slots is
  /// allocated.
  bool is_idle(const resource_id& id) const;

  /// Whether a free slot of TaskExecutor `id` fits a pending request: a
  /// job waiting for all of its slots (its siblings not started yet) needs
  /// it, idle as it looks.
  bool serves_pending(const resource_id& id) const;

  /// One registered TaskExecutor's slots.
  struct worker_slots {
    resource_id id;
    int32_t total = 0;
    int32_t free = 0;
    /// Each slot: its profile and, when allocated, the job holding it.
    std::vector<slot_status> slots;
  };

  /// Every registered TaskExecutor's slots, in registration order.
  std::vector<worker_slots> task_executors() const;

  /// The slots `job` could hold: free ones and its own, on registered
  /// TaskExecutors other than `excluded`.
  int32_t slots_for(job_id job, const std::vector<resource_id>& excluded) const;

  /// The registered TaskExecutors holding slots of `job`, each with the
  /// number of them.
  std::vector<std::pair<resource_id, int32_t>> holders_of(job_id job) const;
  /// Gives up the slots of `job` that TaskExecutors reported allocated
  /// when they registered (kept for a JobMaster that is gone, which its
  /// successor did not adopt): they stay booked until each TaskExecutor
  /// frees them (free_slot), once their canceled subtasks have ended;
  /// returns the TaskExecutors that held some.
  std::vector<resource_id> free_kept(job_id job);
  int32_t task_executor_count() const;
  int32_t slot_count() const;
  int32_t free_slot_count() const;
  int32_t pending_count() const;

private:
  struct slot {
    resource_profile profile;
    allocation_id alloc; // nil when free
    job_id job;          // the holder's (nil when free)
    /// Reported allocated when its TaskExecutor registered: kept for a
    /// previous JobMaster, for its successor to adopt.
    bool kept = false;
  };
  struct worker {
    resource_id id;
    std::vector<slot> slots;
    int32_t free = 0;
    size_t next_free = 0; // no free slot below this index
  };
  struct pending {
    job_id job;
    slot_request request;
  };

  worker* pick(const resource_profile& wanted, int32_t& index);
  int32_t take_slot(worker& w, const resource_profile& wanted);

  bool spread_out_;
  std::vector<worker> workers_; // in registration order
  std::deque<pending> pending_;
};

} // namespace weir
