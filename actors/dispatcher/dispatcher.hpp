#pragma once

#include <functional>

#include "actors/job_master/job_master.hpp"
#include "actors/supervisor/restart_intensity.hpp"
#include "messages/dispatcher.hpp"
#include "messages/job_store.hpp"
#include "messages/resource_manager.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace weir {

/// How the Dispatcher starts the JobMaster of a job (Flink's
/// JobManagerRunnerFactory): spawn_job_master in a cluster, a fake in the
/// Dispatcher's protocol tests.
using job_master_factory = std::function<job_master_actor(
  caf::actor_system& sys, job_graph graph, job_master_options opts,
  dispatcher_actor dispatcher, resource_manager_actor rm)>;

/// Spawns a Dispatcher. Its first step is recovery: it loads every stored
/// JobGraph from `store`, skips the jobs that have a stored result, and runs
/// the others; only then does it serve clients. It supervises its
/// JobMasters: one that crashes is started again on the stored JobGraph,
/// with a backoff, until its job's `supervision` (counted per job) is used
/// up; then that job fails and its result is stored, so it is not
/// recovered again. A job's crashes never end the Dispatcher.
///
/// Jobs of a driver (driver mode) form an application (application_tracker).
/// With `application_mode` the cluster serves one application: when it has
/// ended, the Dispatcher ends with application_finished or
/// application_failed. It starts JobMasters with `start_job_master`
/// (empty: spawn_job_master).
dispatcher_actor spawn_dispatcher(caf::actor_system& sys, job_store_actor store,
                                  resource_manager_actor rm,
                                  job_master_options jm_opts,
                                  supervision_options supervision = {},
                                  bool application_mode = false,
                                  job_master_factory start_job_master = {});

} // namespace weir
