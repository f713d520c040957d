#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <caf/actor.hpp>

#include "actors/common/heartbeat_monitor.hpp"
#include "dataplane/exchange_options.hpp"
#include "dataplane/network_buffers.hpp"
#include "messages/data_service.hpp"
#include "messages/dispatcher.hpp"
#include "messages/resource_manager.hpp"
#include "messages/task_executor.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace weir {

class task_metrics;
class data_registry;

/// Options of one TaskExecutor (Flink's taskmanager.* keys).
struct task_executor_options {
  /// Name of this worker, unique in the cluster.
  resource_id id;
  /// Number of slots (taskmanager.numberOfTaskSlots, default 1).
  int32_t slots = 1;
  /// Resources of each slot; zeros mean unknown.
  resource_profile slot_profile;
  /// Data plane tuning for the subtasks it runs.
  exchange_options exchange;
  /// Its network-buffer budget, checked before subtasks are spawned.
  network_buffer_options network;
  /// This worker's directory for RocksDB state, under
  /// taskmanager.state.local.root-dirs (see local_state_dir_for).
  std::string local_state_dir;
  /// The cluster's Dispatcher, for driver subtasks (driver mode).
  dispatcher_actor dispatcher;
  /// Heartbeats expected from the ResourceManager and the JobMasters.
  heartbeat_options heartbeat;
  /// Run on a thread of its own (a taskmanager process), so that its
  /// heartbeat replies and control messages never wait for a scheduler
  /// thread that busy subtasks hold (a large state's snapshot, say). Tests
  /// on CAF's deterministic scheduler leave it off.
  bool own_thread = false;
  /// Whether its helper for blocking file I/O (the code resolver) gets a
  /// thread of its own. Tests on CAF's deterministic scheduler turn it
  /// off: a detached actor runs outside the test scheduler, and its
  /// messages to scheduled actors would race with the test's thread.
  bool helper_threads = true;
  /// Its process's data service and data port (none: its batches to other
  /// taskmanagers travel as messages), and the service's registry of
  /// subtasks, where it enters each subtask it spawns.
  data_service_actor data;
  data_endpoint data_port;
  std::shared_ptr<data_registry> registry;
  /// How long subtasks outlive their lost JobMaster (or ResourceManager),
  /// waiting for a successor to adopt them
  /// (taskmanager.failover.keep-tasks-timeout; 0: canceled at once).
  std::chrono::milliseconds keep_tasks{0};
  /// Who runs this TaskExecutor (a taskmanager process's connection loop):
  /// when the ResourceManager is lost while subtasks are kept, it is told
  /// with a `lost_atom` message and connects this TaskExecutor to the next
  /// one (a `connect_atom` message) instead of starting another. Without
  /// one, a lost ResourceManager ends this TaskExecutor.
  caf::actor owner;
  /// Its process's metrics for the Prometheus endpoint (null: none): its
  /// slots and its subtasks' reports go there.
  std::shared_ptr<task_metrics> metrics;
};

/// The TaskExecutor's whole interface: the public one and its own timer,
/// which only it sends itself.
using task_executor_private_actor = task_executor_actor::extend<
  /// Self: time to check who has not sent heartbeats.
  caf::reacts_to<beat_atom>,
  /// Self: the subtasks of `job` kept for its lost JobMaster `leader` are
  /// canceled unless a successor adopted them.
  caf::reacts_to<lost_atom, job_id, job_master_id>,
  /// Owner: register with this (new) ResourceManager, keeping the
  /// subtasks that wait for adoption.
  caf::reacts_to<connect_atom, dispatcher_actor, resource_manager_actor>>;

/// Spawns a TaskExecutor that registers with `rm` at once.
task_executor_actor spawn_task_executor(caf::actor_system& sys,
                                        task_executor_options opts,
                                        resource_manager_actor rm);

} // namespace weir
