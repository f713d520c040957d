#pragma once

// The TaskExecutor's state, in a header of its own so that the simulation
// (`sim/`) can check its invariants (docs/simulation.md § Invariants)
// against the real slot table and subtasks. Only task_executor.cpp and the
// simulation include it.

#include <memory>

#include "actors/common/heartbeat_monitor.hpp"
#include "actors/task_executor/job_holders.hpp"
#include "actors/task_executor/slot_table.hpp"
#include "actors/task_executor/task_executor.hpp"
#include "dataplane/network_buffers.hpp"
#include "messages/code_resolver.hpp"
#include "messages/running_attempt.hpp"
#include "messages/subtask.hpp"

namespace weir {

struct te_state {
  task_executor_options opts;
  resource_manager_actor rm;
  resource_manager_id rm_leader;
  std::unique_ptr<slot_table> slots;
  /// Network buffers reserved by the subtasks of each slot.
  std::unique_ptr<network_buffer_pool> buffers;
  /// With what each is (for a JobMaster that takes its job over).
  running_subtasks<subtask_actor, running_attempt> subtasks;
  slot_holders<caf::actor_addr> job_masters;
  /// Heartbeat requests from the ResourceManager and the JobMasters.
  heartbeat_monitor hb;
  /// Finds or fetches jobs' libraries and files (a detached helper).
  code_resolver_actor resolver;
  static inline const char* name = "task_executor";
};

} // namespace weir
