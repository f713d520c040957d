#pragma once

#include <memory>

#include "dataplane/exchange_options.hpp"
#include "messages/deployment.hpp"
#include "messages/data_service.hpp"
#include "messages/dispatcher.hpp"
#include "messages/job_master.hpp"
#include "messages/subtask.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace weir {

class task_metrics;
class data_registry;

/// What a TaskExecutor gives every subtask besides its deployment.
struct subtask_env {
  caf::actor_system* system = nullptr;
  exchange_options exchange;
  /// Where RocksDB state goes (taskmanager.state.local.root-dirs).
  std::string local_state_dir;
  /// The job's libraries and files on this node.
  local_code code;
  /// The cluster's Dispatcher: a driver submits its jobs there.
  dispatcher_actor dispatcher;
  /// The job's JobMaster (a driver's output goes there).
  job_master_actor job_master;
  /// Where the subtask also leaves its metrics reports (null: nowhere).
  std::shared_ptr<task_metrics> metrics;
  /// The process's data service and its data port (none: batches to
  /// other taskmanagers travel as messages); the registry where frames
  /// find the subtask.
  data_service_actor data;
  data_endpoint data_port;
  std::shared_ptr<data_registry> registry;
};

/// Tells subtask `h` that its JobMaster is lost: until a successor adopts
/// it, its end of input waits (subtask_runner::detach).
void detach_subtask(const subtask_actor& h);

/// Spawns the actor running one subtask. It opens its operators at once
/// (reporting INITIALIZING, or FAILED), runs when the JobMaster sends its
/// wiring, and reports FINISHED, FAILED or CANCELED to `jm` before it quits.
/// Subtasks doing blocking file I/O (file sources and sinks, RocksDB state
/// under env.local_state_dir, drivers) get a thread of their own
/// (detached).
subtask_actor spawn_subtask(task_deployment d, job_master_actor jm,
                            const subtask_env& env);

} // namespace weir
