#pragma once

#include <chrono>
#include <functional>

#include "actors/common/heartbeat_monitor.hpp"
#include "config/config.hpp"
#include "messages/dispatcher.hpp"
#include "messages/job_graph.hpp"
#include "messages/job_master.hpp"
#include "messages/job_store.hpp"
#include "messages/resource_manager.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace weir {

/// Options of a JobMaster.
struct job_master_options {
  /// The cluster's configuration (restart-strategy.* and more); a job's own
  /// `config` keys apply on top.
  configuration config;
  /// collect.max-bytes: the most the job's collect sinks may hand over.
  size_t collect_max_bytes = size_t{64} << 20;
  /// collect-sink.batch-size.max: the most one client poll gets.
  size_t collect_batch_bytes = size_t{2} << 20;
  /// How often the Dispatcher started a JobMaster for this job before (0:
  /// the first). The fault-injection hook counts crashes with it.
  int32_t incarnation = 0;
  /// Whether the job ran before under another JobMaster (a restart of a
  /// crashed one, or a job the jobmanager recovered): its subtasks may
  /// still run, kept by their workers, and are adopted if they all do
  /// (docs/state.md § Jobmanager failover without task restarts).
  bool takes_over = false;
  /// jobmanager.failover.reconcile-timeout: how long it waits for workers
  /// that kept its subtasks to register (0: it asks once; a mini
  /// cluster's workers never outlive it).
  std::chrono::milliseconds reconcile_timeout{0};
  /// Heartbeats sent to the TaskExecutors that hold the job's slots.
  heartbeat_options heartbeat;
  /// Where completed checkpoints are stored and found again after a
  /// restart of the JobMaster (none: in memory only).
  job_store_actor store;
  /// execution.checkpointing.dir as resolved for the cluster (empty: none);
  /// RocksDB checkpoints write their files under `<dir>/<job id>`.
  std::string checkpoint_dir;
  /// Driver jobs: also write what the driver prints (ctx.print) to this
  /// process's stdout as it arrives. Set for a detached application's
  /// jobmanager, whose stdout is the application's logs/stdout.txt and
  /// which has no client to print it.
  bool print_driver_output = false;
  /// Whether this jobmanager still leads (high availability: its etcd lease
  /// has not ended, ha/leader_election.hpp); none: always. In the moment
  /// between a frozen leader running again and its watchdog ending it, its
  /// JobMasters deploy, adopt and free nothing, and its Dispatcher starts
  /// none: a standby leads by then (docs/simulation.md § What the seeds
  /// found).
  std::function<bool()> leading;
};

/// Spawns the JobMaster of `graph`. It schedules the job at once and reports
/// the job's result to `dispatcher` with a `done` message before it quits.
job_master_actor spawn_job_master(caf::actor_system& sys, job_graph graph,
                                  job_master_options opts,
                                  dispatcher_actor dispatcher,
                                  resource_manager_actor rm);

} // namespace weir
