#pragma once

#include <functional>
#include <string>
#include <vector>

#include "messages/resource_manager.hpp"
#include "messages/worker_launcher.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace weir {

/// One worker process to start.
struct worker_request {
  /// The jobmanager's HOST:PORT.
  std::string jobmanager;
  resource_id id;
  int32_t slots = 1;
  /// The profile of each of its slots.
  resource_profile slot;
};

/// How to start worker processes: `program` with the arguments
/// `arguments` builds for each (cli/ knows the taskmanager's flags and
/// supplies it). Local workers' stdout is the jobmanager's.
struct worker_command {
  std::string program;
  /// The jobmanager's HOST:PORT, set by the ResourceManager once it is
  /// known.
  std::string jobmanager;
  std::function<std::vector<std::string>(const worker_request&)> arguments;
  /// The cluster's log directory (a Slurm job's output goes there).
  std::string log_dir;
  /// A name of this cluster, unique among the clusters of its user (the
  /// Slurm jobs' names start with it).
  std::string cluster_name = "weir";
};

/// Spawns the local-process worker backend of `rm` (detached; the
/// ResourceManager links to it, so it ends with it and stops its workers
/// then).
worker_launcher_actor spawn_worker_launcher(caf::actor_system& sys,
                                            resource_manager_actor rm,
                                            worker_command cmd);

} // namespace weir
