#pragma once

#include <functional>

#include "actors/common/heartbeat_monitor.hpp"
#include "actors/resource_manager/worker_launcher.hpp"
#include "actors/resource_manager/worker_pool.hpp"

#include "messages/resource_manager.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace weir {

/// Options of the ResourceManager.
struct resource_manager_options {
  /// Flink's cluster.evenly-spread-out-slots (default false: fill the first
  /// TaskExecutor first).
  bool evenly_spread_out_slots = false;
  /// Heartbeats sent to TaskExecutors and JobMasters.
  heartbeat_options heartbeat;
  /// Driver mode: the ResourceManager is active, it starts workers on
  /// demand (with `worker`, once the jobmanager's address is known) and
  /// stops idle ones.
  bool active = false;
  worker_pool_options pool;
  worker_command worker;
  /// The worker backend (resourcemanager.backend): local processes by
  /// default; process/options.cpp picks Slurm's (slurm_launcher.hpp).
  std::function<worker_launcher_actor(caf::actor_system&,
                                      resource_manager_actor, worker_command)>
    launcher = spawn_worker_launcher;
};

/// The ResourceManager's whole interface: the public one and its own
/// timers, which only it sends itself.
using resource_manager_private_actor = resource_manager_actor::extend<
  /// Self: time to send heartbeats to TaskExecutors and JobMasters.
  caf::reacts_to<beat_atom>,
  /// Self (active mode): time to stop idle workers and start missing ones.
  caf::reacts_to<tick_atom>>;

/// Spawns a ResourceManager with a fresh fencing token.
resource_manager_actor spawn_resource_manager(caf::actor_system& sys,
                                              resource_manager_options opts);

} // namespace weir
