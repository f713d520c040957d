#include "cluster/options.hpp"

#include "cluster/mini_cluster.hpp"
#include "config/keys.hpp"

namespace weir {

network_buffer_options network_buffers_of(const configuration& cfg) {
  network_buffer_options n;
  n.max_bytes = cfg.get(keys::network_max).mb << 20;
  n.buffers_per_channel
    = static_cast<int32_t>(cfg.get(keys::network_buffers_per_channel));
  n.floating_per_gate
    = static_cast<int32_t>(cfg.get(keys::network_floating_per_gate));
  n.max_exclusive_per_gate
    = static_cast<int32_t>(cfg.get(keys::network_max_exclusive_per_gate));
  return n;
}

void read_master_keys(const configuration& cfg, resource_manager_options& rm,
                      job_master_options& jm) {
  rm.evenly_spread_out_slots = cfg.get(keys::evenly_spread_out_slots);
  jm.collect_max_bytes
    = static_cast<size_t>(cfg.get(keys::collect_max_bytes).mb) << 20;
  jm.collect_batch_bytes
    = static_cast<size_t>(cfg.get(keys::collect_batch_max).mb) << 20;
  jm.config = cfg;
}

mini_cluster_options mini_cluster_options::from(const configuration& cfg) {
  mini_cluster_options mc;
  mc.task_executors
    = static_cast<int32_t>(cfg.get(keys::minicluster_task_managers));
  mc.slots_per_task_executor = static_cast<int32_t>(cfg.get(keys::task_slots));
  mc.state_dir = cfg.get(keys::storage_dir);
  mc.checkpoint_dir = checkpoint_dir_of(cfg, mc.state_dir);
  mc.local_state_root = cfg.get(keys::local_state_root);
  mc.network = network_buffers_of(cfg);
  mc.keep_tasks = cfg.get(keys::keep_tasks_timeout);
  read_master_keys(cfg, mc.resource_manager, mc.job_master);
  mc.supervision = supervision_options::from(cfg);
  return mc;
}

} // namespace weir
