#pragma once

#include "actors/task_executor/output_gate.hpp"
#include "messages/deployment.hpp"
#include "messages/job_master.hpp"
#include "messages/subtask.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace weir {

/// Spawns the actor running one subtask. It opens its operators at once
/// (reporting INITIALIZING, or FAILED), runs when the JobMaster sends its
/// wiring, and reports FINISHED, FAILED or CANCELED to `jm` before it quits.
/// Subtasks doing blocking file I/O (file sources and sinks, RocksDB state
/// under `local_state_dir`) get a thread of their own (detached).
subtask_actor spawn_subtask(caf::actor_system& sys, task_deployment d,
                            job_master_actor jm, const exchange_options& opts,
                            const std::string& local_state_dir,
                            const local_code& code = {});

} // namespace weir
