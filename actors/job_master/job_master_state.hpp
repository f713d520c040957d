#pragma once

// The JobMaster's state and the functions its two source files share
// (job_master.cpp: scheduling and failover; job_master_checkpoints.cpp:
// checkpoints and savepoints). Internal to the JobMaster.

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/common/heartbeat_monitor.hpp"
#include "actors/job_master/checkpoint_coordinator.hpp"
#include "actors/job_master/execution_graph.hpp"
#include "actors/job_master/job_master.hpp"
#include "actors/job_master/restart_strategy.hpp"
#include "messages/task_executor.hpp"

namespace weir::job_master_detail {

/// Requests the JobMaster makes answer within this time.
constexpr auto deploy_timeout = std::chrono::seconds(60);

/// A client's `weir checkpoint`, `weir savepoint` or `weir stop`.
struct checkpoint_request {
  caf::typed_response_promise<int64_t> checkpoint;
  caf::typed_response_promise<std::string> savepoint;
  bool is_savepoint = false;
  bool full = false;
  std::string dir;
  bool stop = false;

  /// Answers the client with `err`.
  void refuse(const caf::error& err) {
    if (is_savepoint)
      savepoint.deliver(err);
    else
      checkpoint.deliver(err);
  }
};

struct jm_state {
  job_master_options opts;
  std::unique_ptr<execution_graph> graph;
  dispatcher_actor dispatcher;
  resource_manager_actor rm;
  job_master_id leader = job_master_id::random();
  job_state state = job_state::created;
  bool finalized = false;
  std::string failure;
  int64_t start_time_ms = 0;
  std::map<allocation_id, int32_t> pending_slots; // allocation → shared slot
  std::vector<task_executor_actor> executor_of_slot;
  std::vector<std::string> executor_name_of_slot;
  std::map<caf::actor_addr, task_executor_actor> executors; // watched
  heartbeat_monitor hb; ///< heartbeats to the executors
  std::vector<subtask_actor> handles; // by flat execution index
  std::map<caf::actor_addr, int32_t> flat_by_addr;
  size_t deployed = 0;
  /// Records of collect sinks, by flat index of the sink subtask.
  std::map<int32_t, std::vector<record>> collected;
  std::unique_ptr<checkpoint_coordinator> checkpoints;
  /// Collected records each sink subtask had handed over when it
  /// acknowledged a pending checkpoint (checkpoint id → flat → count).
  std::map<int64_t, std::map<int32_t, size_t>> collected_at;
  /// The same for the checkpoint a restart resumes from.
  std::map<int32_t, size_t> committed_collected;
  /// Whether a failover may resume from a checkpoint: every sink is one
  /// whose output the JobMaster can cut back to it (collect, discard).
  /// What every slot of the job must offer (the driver's profile; else
  /// anything).
  resource_profile slot_profile;
  /// The state backend every subtask gets (state.backend.*).
  state_backend_desc backend;
  bool resumable = false;
  /// Whether a later JobMaster may resume from a stored checkpoint: as
  /// above, but collect sinks do not count (their records lived in this
  /// JobMaster).
  bool resumable_from_storage = false;
  /// Whether the next deployment restores the newest completed checkpoint
  /// (or the savepoint the job starts from).
  bool restore_state = false;
  /// Clients waiting for a checkpoint or savepoint they asked for, by id.
  std::map<int64_t, checkpoint_request> requests;
  /// A stop with a savepoint: the subtasks are canceled, the job FINISHES.
  bool stopping = false;
  std::unique_ptr<restart_strategy> restarts;
  std::chrono::milliseconds restart_delay{0};
  uint64_t epoch = 0; ///< scheduling round; replies of older rounds are stale
  int64_t crashes_to_inject = 0; ///< weir.fault.jobmaster-crashes
  static inline const char* name = "job_master";
};

using self_ptr = job_master_actor::stateful_pointer<jm_state>;

// -- job_master.cpp ---------------------------------------------------------

/// Fails the job for good.
void fail_job(self_ptr self, std::string cause);

/// Stops every subtask that still runs.
void cancel_all(self_ptr self);

/// Asks the ResourceManager for the job's slots.
void request_slots(self_ptr self);

// -- job_master_checkpoints.cpp ----------------------------------------------

/// Answers every waiting checkpoint or savepoint request with an error.
void fail_requests(self_ptr self, const std::string& why);

/// Periodic trigger of scheduling round `epoch`.
void trigger_checkpoint(self_ptr self, uint64_t epoch);

/// A subtask acknowledged checkpoint `id`.
void on_checkpoint_ack(self_ptr self, execution_attempt_id attempt, int64_t id,
                       operator_states& states);

/// Before the first scheduling: a stored checkpoint, or the savepoint the
/// job starts from, then the slot request.
void load_checkpoint_then_schedule(self_ptr self);

/// A client's `weir checkpoint`: the reply is the checkpoint's id.
caf::typed_response_promise<int64_t> checkpoint_now(self_ptr self, bool full);

/// A client's `weir savepoint` or `weir stop`: the reply is the path.
caf::typed_response_promise<std::string>
savepoint_now(self_ptr self, std::string dir, bool stop);

} // namespace weir::job_master_detail
