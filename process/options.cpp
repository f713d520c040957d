// The options of the cluster's processes as the configuration sets them
// (command-line flags, applied by cli/, win over these).
#include <unistd.h>

#include <cstdlib>

#include <fmt/format.h>

#include "actors/resource_manager/slurm_launcher.hpp"
#include "cluster/mini_cluster.hpp"
#include "cluster/options.hpp"
#include "process/processes.hpp"
#include "rest/security.hpp"
#include "config/keys.hpp"
#include "messages/errors.hpp"
#include "net/address.hpp"

namespace weir {

namespace {

/// high-availability.storageDir default: $XDG_STATE_HOME/weir, else
/// ~/.local/state/weir (under the user's home, so every working directory
/// finds the same state).
std::string default_state_dir() {
  if (auto* xdg = std::getenv("XDG_STATE_HOME"); xdg != nullptr && *xdg != 0)
    return std::string{xdg} + "/weir";
  auto* home = std::getenv("HOME");
  return std::string{home != nullptr ? home : "."} + "/.local/state/weir";
}

/// A worker's name when taskmanager.resource-id is not set: HOST-PID.
std::string default_resource_id() {
  char host[256] = "localhost";
  gethostname(host, sizeof(host) - 1);
  return fmt::format("{}-{}", host, getpid());
}

/// resourcemanager.slurm.*: the Slurm backend's settings.
slurm_options slurm_options_of(const configuration& cfg) {
  slurm_options s;
  s.partition = cfg.get(keys::slurm_partition);
  s.account = cfg.get(keys::slurm_account);
  s.time_limit = cfg.get(keys::slurm_time_limit);
  s.cpus_per_slot = cfg.get(keys::slurm_cpus_per_slot);
  s.memory_per_slot_mb = cfg.get(keys::slurm_memory_per_slot).mb;
  s.extra_args = split_words(cfg.get(keys::slurm_sbatch_args));
  s.bin_dir = cfg.get(keys::slurm_bin_dir);
  s.poll_interval = cfg.get(keys::slurm_poll_interval);
  return s;
}

} // namespace

caf::expected<std::string>
listen_security_warning(const configuration& cfg, const std::string& address) {
  if (net::is_loopback_address(address))
    return std::string{};
  auto shown = address.empty() ? std::string{"'' (every address)"} : address;
  if (!cfg.is_set(keys::ssl_internal_enabled))
    return make_error(
      errc::invalid_config,
      fmt::format("refusing to listen on {} without TLS: set {}: true (see "
                  "docs/security.md), or false to accept unauthenticated "
                  "connections from the network",
                  shown, keys::ssl_internal_enabled.name));
  if (cfg.get(keys::ssl_internal_enabled))
    return std::string{};
  return fmt::format("WARNING: listening on {} without TLS: anyone who can "
                     "reach this port can run code on the cluster",
                     shown);
}

caf::expected<jobmanager_options>
jobmanager_options::from(const configuration& cfg) {
  jobmanager_options jm;
  jm.address = cfg.get(keys::jobmanager_address);
  auto warning = listen_security_warning(cfg, jm.address);
  if (!warning)
    return warning.error();
  jm.security_warning = std::move(*warning);
  // Every value was checked against its key's range when it was set.
  jm.port = static_cast<uint16_t>(cfg.get(keys::jobmanager_port));
  jm.rest_address = cfg.get(keys::rest_address);
  auto rest_warning = rest_security::of(cfg).listen_warning(cfg,
                                                            jm.rest_address);
  if (!rest_warning)
    return rest_warning.error();
  jm.rest_security_warning = std::move(*rest_warning);
  jm.rest_port = static_cast<uint16_t>(cfg.get(keys::rest_port));
  jm.rest_advertised = cfg.get(keys::rest_client_address);
  jm.rest_port_set = cfg.is_set(keys::rest_port);
  jm.state_dir = cfg.is_set(keys::storage_dir) ? cfg.get(keys::storage_dir)
                                               : default_state_dir();
  auto etcd = etcd_ha_options::from(cfg);
  if (!etcd)
    return etcd.error();
  jm.etcd = std::move(*etcd);
  if (jm.etcd) {
    // Every jobmanager must reach the same files, and the others must reach
    // the leader at the address it publishes.
    if (!cfg.is_set(keys::storage_dir))
      return make_error(errc::invalid_config,
                        fmt::format("{}: etcd needs {}: a directory every "
                                    "jobmanager can read and write",
                                    keys::ha_type.name,
                                    keys::storage_dir.name));
    if (jm.address.empty() || jm.address == "0.0.0.0" || jm.address == "::")
      return make_error(errc::invalid_config,
                        fmt::format("{}: etcd publishes {} for workers and "
                                    "clients; '{}' is no address they can "
                                    "reach",
                                    keys::ha_type.name,
                                    keys::jobmanager_address.name,
                                    jm.address));
  }
  read_master_keys(cfg, jm.resource_manager, jm.job_master);
  jm.remote = remoting::from(cfg);
  jm.supervision = supervision_options::from(cfg);
  jm.resource_manager.heartbeat = heartbeat_options::from(cfg);
  jm.job_master.heartbeat = jm.resource_manager.heartbeat;
  jm.job_master.reconcile_timeout = cfg.get(keys::reconcile_timeout);
  auto& pool = jm.resource_manager.pool;
  pool.slots_per_worker = static_cast<int32_t>(cfg.get(keys::task_slots));
  pool.idle_timeout = cfg.get(keys::taskmanager_timeout);
  pool.max_failures_per_minute
    = static_cast<int32_t>(cfg.get(keys::start_worker_max_failure_rate));
  if (cfg.get(keys::resourcemanager_backend) == "slurm") {
    auto slurm = slurm_options_of(cfg);
    if (auto problem = slurm.missing_commands(); !problem.empty())
      return make_error(errc::invalid_config, problem);
    jm.resource_manager.launcher = [slurm](caf::actor_system& sys,
                                           resource_manager_actor rm,
                                           worker_command cmd) {
      return spawn_slurm_launcher(sys, std::move(rm), std::move(cmd), slurm);
    };
  }
  return jm;
}

taskmanager_options taskmanager_options::from(const configuration& cfg) {
  taskmanager_options tm;
  tm.slots = static_cast<int32_t>(cfg.get(keys::task_slots));
  tm.resources.cpu_cores = cfg.get(keys::taskmanager_cpu_cores);
  tm.resources.heap_mb = cfg.get(keys::taskmanager_heap).mb;
  tm.resources.direct_mb = cfg.get(keys::taskmanager_off_heap).mb;
  tm.resources.native_mb = cfg.get(keys::taskmanager_managed).mb;
  tm.id = cfg.get_if_set(keys::resource_id).value_or(default_resource_id());
  tm.remote = remoting::from(cfg);
  tm.initial_backoff = cfg.get(keys::registration_initial_timeout);
  tm.max_backoff = cfg.get(keys::registration_max_timeout);
  tm.registration_timeout = cfg.get(keys::taskmanager_registration_timeout);
  tm.keep_tasks = cfg.get(keys::keep_tasks_timeout);
  tm.heartbeat = heartbeat_options::from(cfg);
  tm.local_state_root = cfg.get(keys::local_state_root);
  tm.network = network_buffers_of(cfg);
  tm.metrics_port = cfg.get(keys::prom_port);
  tm.metrics_address = cfg.get(keys::prom_host);
  tm.metrics_prefix = cfg.get(keys::prom_prefix);
  tm.data_host = cfg.get(keys::taskmanager_host);
  tm.data_port = static_cast<uint16_t>(cfg.get(keys::taskmanager_data_port));
  // The data port is guarded as the RPC port is: off loopback only with a
  // TLS decision.
  if (auto warning = listen_security_warning(cfg, tm.data_host); !warning)
    tm.data_host_problem = fmt::format("{}: {}", keys::taskmanager_host.name,
                                       describe(warning.error()));
  else if (!warning->empty())
    tm.data_host_warning = fmt::format(
      "WARNING: data port on {} without TLS: anyone who can reach it can "
      "send batches to the cluster's jobs",
      tm.data_host);
  return tm;
}

std::string taskmanager_options::metrics_port_problem() const {
  if (metrics_port.empty() || parse_port_range(metrics_port))
    return {};
  return fmt::format("metrics.reporter.prom.port: '{}' is not a port, a "
                     "range FROM-TO or 0",
                     metrics_port);
}

resource_profile per_slot(const resource_profile& total, int32_t slots) {
  resource_profile p;
  p.cpu_cores = total.cpu_cores / slots;
  p.heap_mb = total.heap_mb / slots;
  p.direct_mb = total.direct_mb / slots;
  p.native_mb = total.native_mb / slots;
  return p;
}

} // namespace weir
