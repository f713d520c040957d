#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <caf/expected.hpp>

#include "actors/job_master/adaptive_parallelism.hpp"
#include "actors/job_master/checkpoint_coordinator.hpp"
#include "actors/job_master/restart_strategy.hpp"
#include "messages/deployment.hpp"
#include "messages/job_graph.hpp"
#include "messages/slots.hpp"

namespace weir {

class configuration;

/// What a JobMaster needs to know of its job's configuration (the
/// cluster's, with the job's own `config` keys on top), resolved once when
/// the JobMaster starts.
struct job_settings {
  /// restart-strategy.*.
  restart_strategy_config restarts;
  /// execution.checkpointing.* and state.checkpoints.num-retained.
  checkpoint_options checkpoints;
  /// What every slot of the job must offer: the driver's profile (driver.*)
  /// for a driver job, else anything.
  resource_profile slot_profile;
  /// The state backend every subtask gets (state.backend.*).
  state_backend_desc backend;
  /// execution.checkpointing.savepoint-dir, absolute: where a savepoint
  /// asked for without a directory goes ("": nowhere).
  std::string savepoint_dir;
  /// execution.savepoint.path: the savepoint the job starts from, if set.
  std::optional<std::string> savepoint_path;
  /// slot.request.timeout: a job that cannot get all its slots within this
  /// time fails.
  std::chrono::milliseconds slot_request_timeout{300000};
  /// execution.savepoint.ignore-unclaimed-state.
  bool ignore_unclaimed_state = false;
  /// pipeline.max-parallelism, when set.
  std::optional<int32_t> max_parallelism;
  /// jobmanager.scheduler and the adaptive scheduler's keys.
  adaptive_options adaptive;
  /// pipeline.auto-watermark-interval.
  std::chrono::milliseconds auto_watermark_interval{200};
  /// weir.fault.jobmaster-crashes (fault-injection builds only; else 0).
  int64_t crashes_to_inject = 0;
  /// Whether a failover may resume from a checkpoint: every sink's output is
  /// discarded, collected by the JobMaster (which cuts it back) or
  /// published exactly once.
  bool resumable = false;
  /// Whether a later JobMaster may resume from a stored checkpoint: as
  /// above, but collected output does not count (it lived in the JobMaster).
  bool resumable_from_storage = false;
};

/// Resolves `graph`'s settings: its `config` on top of `cluster`;
/// `checkpoint_dir` is execution.checkpointing.dir as the cluster resolved
/// it (empty: none). A bad job config is an error naming the key.
[[nodiscard]] caf::expected<job_settings> resolve_job_settings(const configuration& cluster,
                                                 const job_graph& graph,
                                                 const std::string& checkpoint_dir);

} // namespace weir
