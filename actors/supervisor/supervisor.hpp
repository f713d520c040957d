#pragma once

#include <chrono>

#include "actors/job_master/job_master.hpp"
#include "actors/resource_manager/resource_manager.hpp"
#include "actors/supervisor/restart_intensity.hpp"
#include "messages/job_store.hpp"
#include "messages/supervisor.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace weir {

/// What the jobmanager's supervisor starts.
struct supervisor_options {
  supervision_options intensity;
  resource_manager_options resource_manager;
  job_master_options job_master;
  /// Driver mode: the cluster serves one application and ends with it.
  bool application_mode = false;
};

/// Spawns the supervisor, which spawns a ResourceManager and a Dispatcher
/// (on `store`) at once. An exit message takes both down with it.
supervisor_actor spawn_supervisor(caf::actor_system& sys, job_store_actor store,
                                  supervisor_options opts);

} // namespace weir
