#include "actors/job_master/job_settings.hpp"

#include <filesystem>

#include "config/config.hpp"
#include "config/fault_keys.hpp"
#include "config/keys.hpp"
#include "messages/file_names.hpp"
#include "operators/registry.hpp"
#include "plan/chaining.hpp"

namespace weir {

namespace {

/// Sets the two resumable flags from what the job's sinks guarantee.
void set_resumable(const job_graph& graph, job_settings& s) {
  s.resumable = true;
  s.resumable_from_storage = true;
  auto& reg = ops::registry::builtin();
  for (size_t i = 0; i < graph.vertices.size(); ++i) {
    if (vertex_role(graph, static_cast<int32_t>(i)) != ops::role::sink)
      continue;
    auto& v = graph.vertices[i];
    switch (reg.guarantee_of(v.op, v.params)) {
      case ops::sink_guarantee::external_at_least_once:
        s.resumable = false;
        s.resumable_from_storage = false;
        break;
      case ops::sink_guarantee::collected_by_job_master:
        s.resumable_from_storage = false;
        break;
      case ops::sink_guarantee::external_exactly_once:
      case ops::sink_guarantee::discarded:
        break;
    }
  }
}

} // namespace

caf::expected<job_settings> resolve_job_settings(const configuration& cluster,
                                                 const job_graph& graph,
                                                 const std::string& checkpoint_dir) {
  auto cfg = cluster;
  if (auto err = cfg.apply(graph.config, "job config"))
    return err;
  job_settings s;
  s.restarts = restart_strategy_config::from(cfg);
  s.checkpoints = checkpoint_options::from(cfg);
  if (graph.priority == job_priority::driver) {
    // The driver's slot (-Dhm, -Ddm, -Dc, -Dnm of weir run -D).
    s.slot_profile.cpu_cores = cfg.get(keys::driver_cpu_cores);
    s.slot_profile.heap_mb = cfg.get(keys::driver_heap_memory).mb;
    s.slot_profile.direct_mb = cfg.get(keys::driver_direct_memory).mb;
    s.slot_profile.native_mb = cfg.get(keys::driver_native_memory).mb;
  }
  s.auto_watermark_interval = cfg.get(keys::auto_watermark_interval);
  if (auto n = cfg.get_if_set(keys::max_parallelism))
    s.max_parallelism = static_cast<int32_t>(*n); // in [1, 32768]
  s.backend.type = cfg.get(keys::state_backend);
  s.backend.incremental = cfg.get(keys::checkpoint_incremental);
  if (!checkpoint_dir.empty())
    s.backend.checkpoint_dir = checkpoint_dir + "/" + graph.id.to_string();
  if (auto dir = cfg.get(keys::savepoint_dir); !dir.empty())
    s.savepoint_dir
      = std::filesystem::absolute(dir).lexically_normal().string();
  if (auto path = cfg.get_if_set(keys::savepoint_path))
    s.savepoint_path = local_path(*path); // Flink's file: URI too
  s.slot_request_timeout = cfg.get(keys::slot_request_timeout);
  s.adaptive = adaptive_options::from(cfg);
  s.ignore_unclaimed_state
    = cfg.get(keys::savepoint_ignore_unclaimed_state);
#if WEIR_FAULT_INJECTION
  s.crashes_to_inject = cfg.get(keys::fault_jobmaster_crashes);
#endif
  set_resumable(graph, s);
  return s;
}

} // namespace weir
