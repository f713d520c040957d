#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "actors/job_master/job_master.hpp"
#include "actors/resource_manager/resource_manager.hpp"
#include "actors/supervisor/restart_intensity.hpp"
#include "dataplane/exchange_options.hpp"
#include "dataplane/network_buffers.hpp"
#include "messages/dispatcher.hpp"
#include "messages/job_store.hpp"
#include "messages/supervisor.hpp"
#include "messages/task_executor.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace weir {

namespace storage {
class kv_store;
} // namespace storage

/// Options of an embedded cluster (Flink's MiniCluster).
struct mini_cluster_options {
  /// Number of TaskExecutors (minicluster.number-of-taskmanagers, default 1).
  int32_t task_executors = 1;
  /// Slots per TaskExecutor (taskmanager.numberOfTaskSlots, default 1).
  int32_t slots_per_task_executor = 1;
  /// high-availability.storageDir: a RocksDB directory whose unfinished jobs
  /// are recovered at start. Empty (the default) keeps jobs in memory.
  std::string state_dir;
  /// An already opened store (a standby jobmanager opens it when it gets the
  /// lock); used instead of `state_dir` when set.
  std::shared_ptr<storage::kv_store> store;
  /// execution.checkpointing.dir: where completed checkpoints are written
  /// ("" keeps them in memory only).
  std::string checkpoint_dir;
  resource_manager_options resource_manager;
  job_master_options job_master;
  exchange_options exchange;
  /// Each TaskExecutor's network-buffer budget (taskmanager.memory.network.*).
  network_buffer_options network;
  /// taskmanager.failover.keep-tasks-timeout: a crashed JobMaster's
  /// successor adopts the subtasks it ran.
  std::chrono::milliseconds keep_tasks{30000};
  /// taskmanager.state.local.root-dirs ("": the temporary directory).
  std::string local_state_root;
  /// Driver mode: the cluster ends with its one application.
  bool application_mode = false;
  /// Restart intensity of the supervisor and of the Dispatcher.
  supervision_options supervision;

  /// Reads minicluster.number-of-taskmanagers, taskmanager.numberOfTaskSlots,
  /// high-availability.storageDir, execution.checkpointing.dir,
  /// taskmanager.state.local.root-dirs, the ResourceManager's and
  /// JobMasters' keys and supervision. No heartbeats: everything runs in
  /// one process.
  static mini_cluster_options from(const configuration& cfg);
};

/// A whole cluster inside one actor system: a job store, a supervisor with
/// its ResourceManager and Dispatcher, and TaskExecutors. Stopping it (or
/// destroying it) tells every actor to quit; the actor system then finishes.
class mini_cluster {
public:
  /// Starts the cluster; fails when the state directory cannot be opened.
  [[nodiscard]] static caf::expected<std::unique_ptr<mini_cluster>>
  start(caf::actor_system& sys, const mini_cluster_options& opts);

  ~mini_cluster();

  /// The first Dispatcher and ResourceManager (after a restart, ask the
  /// supervisor for the current ones).
  dispatcher_actor dispatcher() const { return dispatcher_; }
  resource_manager_actor resource_manager() const { return rm_; }
  supervisor_actor supervisor() const { return supervisor_; }

  /// Sends every cluster actor an exit message (idempotent).
  void stop();

private:
  mini_cluster() = default;

  job_store_actor store_;
  std::string local_state_dir_;
  supervisor_actor supervisor_;
  resource_manager_actor rm_;
  dispatcher_actor dispatcher_;
  std::vector<task_executor_actor> task_executors_;
};

/// Starts the embedded cluster of `weir run`: when `opts.state_dir` is set,
/// opens it and claims it for `cluster_id` first (a directory of another
/// cluster is refused), then mini_cluster::start.
[[nodiscard]] caf::expected<std::unique_ptr<mini_cluster>>
start_local_cluster(caf::actor_system& sys, mini_cluster_options opts,
                    const std::string& cluster_id);

/// execution.checkpointing.dir, or `<state_dir>/checkpoints` by default;
/// "" (in memory) without a state directory.
std::string checkpoint_dir_of(const configuration& cfg,
                              const std::string& state_dir);

/// Slots per TaskExecutor so that `task_executors` workers hold at least
/// `parallelism` slots (how the local cluster sizes itself to a job).
int32_t slots_for(int32_t parallelism, int32_t task_executors);

} // namespace weir
