#pragma once

// Fakes for the JobMaster's protocol tests: a ResourceManager, a
// TaskExecutor, subtasks and a Dispatcher that record what the JobMaster
// sends them.

#include <string>
#include <utility>
#include <vector>

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "messages/dispatcher.hpp"
#include "messages/resource_manager.hpp"
#include "messages/subtask.hpp"
#include "messages/task_executor.hpp"

namespace weir::test {

/// A ResourceManager that records slot requests and disconnects.
struct fake_rm_state {
  std::vector<std::vector<slot_request>> requests;
  int32_t disconnects = 0;
};

using fake_rm_impl = caf::stateful_actor<fake_rm_state, resource_manager_actor::base>;

resource_manager_actor::behavior_type
fake_resource_manager(resource_manager_actor::stateful_pointer<fake_rm_state> self);

/// A subtask that records the JobMaster's control messages and, when
/// canceled, reports CANCELED to its JobMaster.
struct fake_subtask_state {
  execution_attempt_id attempt;
  job_master_actor jm;
  bool started = false;
  /// Checkpoint triggers from the JobMaster.
  std::vector<checkpoint_barrier> triggers;
  std::vector<int64_t> commits;
  bool canceled = false;
  /// A stop halted it (stop_atom), and no finish or resume came yet.
  bool halted = false;
  /// The JobMaster told it to end its input (finish_atom).
  bool finish_requested = false;
};

using fake_subtask_impl = caf::stateful_actor<fake_subtask_state, subtask_actor::base>;

subtask_actor::behavior_type
fake_subtask(subtask_actor::stateful_pointer<fake_subtask_state> self,
             execution_attempt_id attempt, job_master_actor jm);

/// A TaskExecutor that offers the slots the ResourceManager grants it (as
/// the real one does), spawns a fake subtask per deployment and records what
/// it was asked.
struct fake_te_state {
  resource_id id;
  std::vector<task_deployment> deployments;
  std::vector<subtask_actor> subtasks;
  std::vector<job_id> freed;
};

using fake_te_impl = caf::stateful_actor<fake_te_state, task_executor_actor::base>;

task_executor_actor::behavior_type
fake_task_executor(task_executor_actor::stateful_pointer<fake_te_state> self,
                   resource_id name);

/// A Dispatcher that records the results its JobMasters report.
struct fake_dispatcher_state {
  std::vector<job_result> results;
};

using fake_dispatcher_impl
  = caf::stateful_actor<fake_dispatcher_state, dispatcher_actor::base>;

dispatcher_actor::behavior_type
fake_dispatcher(dispatcher_actor::stateful_pointer<fake_dispatcher_state> self);

} // namespace weir::test
