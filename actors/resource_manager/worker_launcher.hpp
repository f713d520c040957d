#pragma once

#include <string>
#include <vector>

#include "messages/resource_manager.hpp"
#include "messages/worker_launcher.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace weir {

/// How to start a worker process: `<program> taskmanager -m <jobmanager>
/// --id ID --slots N` with the slot profile as --cpu-cores/--memory/
/// --direct-memory/--native-memory totals, then `extra_args` (the
/// jobmanager's configuration flags). Its stdout is the jobmanager's, its
/// event log goes to `<log_dir>/<id>.log`.
struct worker_command {
  std::string program;
  std::string jobmanager;
  std::vector<std::string> extra_args;
  std::string log_dir;
};

/// Spawns the local-process worker backend of `rm` (detached; the
/// ResourceManager links to it, so it ends with it and stops its workers
/// then).
worker_launcher_actor spawn_worker_launcher(caf::actor_system& sys,
                                            resource_manager_actor rm,
                                            worker_command cmd);

/// The taskmanager arguments for worker `id` (after the program name).
std::vector<std::string> worker_arguments(const worker_command& cmd,
                                          const resource_id& id, int32_t slots,
                                          const resource_profile& slot);

} // namespace weir
