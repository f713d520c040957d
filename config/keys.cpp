#include "config/keys.hpp"

namespace weir {

const std::vector<key_info>& config_keys() {
  using namespace keys;
  static const std::vector<key_info> all{
    evenly_spread_out_slots.info(),
    storage_dir.info(),
    registration_initial_timeout.info(),
    registration_max_timeout.info(),
    driver_cpu_cores.info(),
    driver_heap_memory.info(),
    driver_direct_memory.info(),
    driver_native_memory.info(),
    checkpoint_dir.info(),
    checkpoint_incremental.info(),
    checkpoint_interval.info(),
    checkpoint_timeout.info(),
    max_concurrent_checkpoints.info(),
    checkpoint_min_pause.info(),
    savepoint_dir.info(),
    savepoint_path.info(),
    savepoint_ignore_unclaimed_state.info(),
    heartbeat_interval.info(),
    heartbeat_rpc_failure_threshold.info(),
    heartbeat_timeout.info(),
    cluster_id.info(),
    supervision_max_restarts.info(),
    supervision_within.info(),
    jobmanager_address.info(),
    jobmanager_port.info(),
    minicluster_task_managers.info(),
    taskmanager_timeout.info(),
    start_worker_max_failure_rate.info(),
    restart_strategy.info(),
    fixed_delay_attempts.info(),
    fixed_delay_delay.info(),
    exponential_initial_backoff.info(),
    exponential_max_backoff.info(),
    exponential_backoff_multiplier.info(),
    exponential_jitter_factor.info(),
    exponential_reset_backoff_threshold.info(),
    exponential_attempts.info(),
    failure_rate_max_failures.info(),
    failure_rate_interval.info(),
    failure_rate_delay.info(),
    slot_request_timeout.info(),
    collect_max_bytes.info(),
    collect_batch_max.info(),
    checkpoints_retained.info(),
    state_backend.info(),
    local_state_root.info(),
    taskmanager_cpu_cores.info(),
    taskmanager_off_heap.info(),
    taskmanager_managed.info(),
    taskmanager_heap.info(),
    network_max.info(),
    network_buffers_per_channel.info(),
    task_slots.info(),
    resource_id.info(),
#ifdef WEIR_FAULT_INJECTION
    fault_jobmaster_crashes.info(),
#endif
  };
  return all;
}

} // namespace weir
