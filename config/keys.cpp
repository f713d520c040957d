#include "config/keys.hpp"

#include "config/fault_keys.hpp"

namespace weir {

const std::vector<key_info>& config_keys() {
  using namespace keys;
  static const std::vector<key_info> all{
    evenly_spread_out_slots.info(),
    storage_dir.info(),
    ha_type.info(),
    ha_etcd_endpoints.info(),
    ha_etcd_lease_ttl.info(),
    ha_etcd_retry_period.info(),
    client_leader_wait.info(),
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
    rest_address.info(),
    rest_client_address.info(),
    rest_port.info(),
    rest_max_content_length.info(),
    rest_inspection_timeout.info(),
    rest_inspection_memory.info(),
    web_submit_enable.info(),
    minicluster_task_managers.info(),
    parallelism_default.info(),
    taskmanager_timeout.info(),
    start_worker_max_failure_rate.info(),
    resourcemanager_backend.info(),
    slurm_partition.info(),
    slurm_account.info(),
    slurm_time_limit.info(),
    slurm_cpus_per_slot.info(),
    slurm_memory_per_slot.info(),
    slurm_sbatch_args.info(),
    slurm_bin_dir.info(),
    slurm_poll_interval.info(),
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
    taskmanager_host.info(),
    taskmanager_data_port.info(),
    task_slots.info(),
    resource_id.info(),
    taskmanager_registration_timeout.info(),
    prom_port.info(),
    prom_host.info(),
    ssl_internal_enabled.info(),
    ssl_internal_certificate.info(),
    ssl_internal_key.info(),
    ssl_internal_trust.info(),
    ssl_internal_handshake_timeout.info(),
    ssl_rest_enabled.info(),
    ssl_rest_certificate.info(),
    ssl_rest_key.info(),
    ssl_rest_authentication.info(),
    ssl_rest_trust.info(),
    max_pending_connections.info(),
    rpc_max_message_size.info(),
    rpc_max_pending_bytes.info(),
#if WEIR_FAULT_INJECTION
    fault_jobmaster_crashes.info(),
    fault_dispatcher_crash.info(),
#endif
  };
  return all;
}

const key_info* find_key(std::string_view name) {
  for (auto& k : config_keys())
    if (k.name == name)
      return &k;
  return nullptr;
}

} // namespace weir
