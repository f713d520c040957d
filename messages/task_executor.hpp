#pragma once

#include <vector>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/deployment.hpp"
#include "messages/ids.hpp"
#include "messages/job_master.hpp"
#include "messages/log_file.hpp"
#include "messages/running_attempt.hpp"
#include "messages/slots.hpp"
#include "messages/subtask.hpp"

namespace weir {

/// A TaskExecutor (Flink's TaskExecutorGateway): what others send it. Its
/// own timers are in its private interface
/// (actors/task_executor/task_executor.hpp).
using task_executor_actor = caf::typed_actor<
  /// ResourceManager: allocate these slots for the job and offer them to its
  /// JobMaster. Refused with fencing_token_mismatch from a replaced leader;
  /// the reply is the number of slots allocated.
  caf::replies_to<request_atom, resource_manager_id, job_id, job_master_id,
                  job_master_actor, std::vector<slot_grant>>::with<int32_t>,
  /// JobMaster: deploy subtasks into slots it accepted; the reply holds the
  /// spawned subtasks in the same order. A vertex id or a library or file
  /// name or hash that cannot be used in a path is refused (invalid_job).
  caf::replies_to<submit_atom, job_master_id, job_master_actor,
                  std::vector<task_deployment>>::with<std::vector<subtask_actor>>,
  /// JobMaster: the job ended; cancel what is left of it and free its slots.
  caf::reacts_to<free_atom, job_id>,
  /// JobMaster taking over a job after a failover: the job's subtasks that
  /// run here (they outlive a lost JobMaster for
  /// taskmanager.failover.keep-tasks-timeout).
  caf::replies_to<reconcile_atom, job_id>::with<std::vector<running_attempt>>,
  /// That JobMaster adopts them: the job's slots here are its own now,
  /// under its token (its predecessor's deployments are refused); the
  /// reply is their number. (It cancels them with a free_atom instead.)
  caf::replies_to<adopt_atom, job_id, job_master_id,
                  job_master_actor>::with<int32_t>,
  /// ResourceManager or JobMaster (high priority): a heartbeat request; the
  /// reply is this TaskExecutor's id.
  caf::replies_to<heartbeat_atom>::with<resource_id>,
  /// ResourceManager (for the REST API): this process's log files.
  caf::replies_to<log_atom>::with<std::vector<log_file>>,
  /// ResourceManager: up to log_piece_bytes of log file `name` from byte
  /// `offset` ("" at its end); invalid_request for a name not listed.
  caf::replies_to<log_atom, std::string, int64_t>::with<std::string>>;

} // namespace weir
