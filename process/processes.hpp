#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <caf/expected.hpp>

#include "actors/job_master/job_master.hpp"
#include "actors/resource_manager/resource_manager.hpp"
#include "actors/supervisor/restart_intensity.hpp"
#include "config/config.hpp"
#include "dataplane/network_buffers.hpp"
#include "ha/gateway.hpp"
#include "ha/leader_election.hpp"
#include "metrics/server.hpp"
#include "cluster/runtime_config.hpp"
#include "messages/slots.hpp"
#include "process/exit_codes.hpp"

namespace weir {

/// Options of the master process (Flink's jobmanager.* keys).
struct jobmanager_options {
  /// jobmanager.rpc.address: the address to listen on.
  std::string address = "127.0.0.1";
  /// A line for the event log once listening ("": none): the warning of
  /// listen_security_warning.
  std::string security_warning;
  /// rest_security::listen_warning.
  std::string rest_security_warning;
  /// jobmanager.rpc.port: 0 picks a free port (printed in the log).
  uint16_t port = 6123;
  /// rest.bind-address and rest.port: the REST API (0: any free port,
  /// named in the log).
  std::string rest_address = "127.0.0.1";
  uint16_t rest_port = 8081;
  /// rest.address: the host clients are told to reach the REST API at (the
  /// URL a leader publishes in etcd); "" for rest_address.
  std::string rest_advertised;
  /// rest.port was set: a port that cannot be used ends the jobmanager. The
  /// default one in use (another cluster on this host has it) only costs
  /// this one its REST API, with a warning.
  bool rest_port_set = false;
  /// high-availability.storageDir: the RocksDB state directory; with etcd,
  /// the directory shared by every jobmanager (the cluster's files are in
  /// its subdirectory named by the cluster id).
  std::string state_dir;
  /// high-availability.type: etcd: leader election and store pointers in
  /// etcd (nothing: the RocksDB lock of state_dir elects the leader).
  std::optional<etcd_ha_options> etcd;
  resource_manager_options resource_manager;
  job_master_options job_master;
  /// jobmanager.supervision.*: restart intensity of the supervisor.
  supervision_options supervision;
  remoting remote;
  /// Driver mode (an application cluster, `weir run -D` without -m): the
  /// ResourceManager starts workers on demand, the cluster ends with its
  /// application (exit code 0, or 1 when it failed) and removes its state
  /// directory.
  bool application = false;

  /// Reads jobmanager.rpc.*, rest.*, high-availability.storageDir (default
  /// $XDG_STATE_HOME/weir, else ~/.local/state/weir), the ResourceManager's
  /// and JobMasters' keys, heartbeats, supervision and remoting. Fails
  /// (`errc::invalid_config`) when the address needs a TLS decision that
  /// was not made (listen_security_warning).
  [[nodiscard]] static caf::expected<jobmanager_options> from(const configuration& cfg);
};

/// The rule for a jobmanager that listens on `address`
/// (docs/operations.md § A session cluster): on a loopback address nothing
/// is needed; on any other, security.ssl.internal.enabled must have been
/// set explicitly, to true or false. Returns the refusal when it was not
/// (`errc::invalid_config`, one line: "refusing to listen on ADDR without
/// TLS: ..."), the warning for the event log when it is false ("WARNING:
/// listening on ADDR without TLS: ..."), else "".
[[nodiscard]] caf::expected<std::string>
listen_security_warning(const configuration& cfg, const std::string& address);

/// Runs a jobmanager until SIGINT or SIGTERM: a Dispatcher and a
/// ResourceManager (JobMasters inside) behind a gateway published on
/// address:port, state in RocksDB; the leader also serves the REST API on
/// rest_address:rest_port. While another jobmanager holds the state
/// directory (RocksDB's lock is the lease) it waits as a standby and takes
/// over, recovering the jobs, once the lock is free. Logs events to the
/// event log. Returns the process exit code: 0 after a signal, 3 when the
/// state directory or a port cannot be used or the stored jobs cannot be
/// recovered (exit_cluster_error), exit_supervision_gave_up.
int run_jobmanager(const jobmanager_options& opts);

/// Options of a worker process (Flink's taskmanager.* keys).
struct taskmanager_options {
  /// The jobmanager, or a leader and its standbys (tried in turn).
  std::vector<endpoint> jobmanagers;
  /// taskmanager.numberOfTaskSlots.
  int32_t slots = 1;
  /// taskmanager.cpu.cores and taskmanager.memory.*: the worker's
  /// resources, split evenly over its slots.
  resource_profile resources;
  /// taskmanager.resource-id; default "<host>-<pid>".
  std::string id;
  remoting remote;
  /// cluster.registration.initial-timeout and .max-timeout: the backoff
  /// between attempts to reach the master.
  std::chrono::milliseconds initial_backoff{100};
  std::chrono::milliseconds max_backoff{10000};
  /// taskmanager.registration.timeout: it ends (exit_jobmanager_unreachable)
  /// once no jobmanager was reachable this long (0: it keeps trying).
  std::chrono::milliseconds registration_timeout{0};
  /// taskmanager.failover.keep-tasks-timeout.
  std::chrono::milliseconds keep_tasks{30000};
  /// Heartbeats expected from the ResourceManager and JobMasters.
  heartbeat_options heartbeat;
  /// Its network-buffer budget (taskmanager.memory.network.*).
  network_buffer_options network;
  /// taskmanager.state.local.root-dirs ("": the temporary directory).
  std::string local_state_root;
  /// metrics.reporter.prom.port and .host: its Prometheus endpoint ("":
  /// none; else a port, a range or 0, see parse_port_range).
  std::string metrics_port;
  std::string metrics_address = "127.0.0.1";
  /// metrics.reporter.prom.prefix: what its series' names start with.
  std::string metrics_prefix = "flink";
  /// taskmanager.host and taskmanager.data.port: its data port, where the
  /// workers it exchanges data with connect (0: any free port).
  std::string data_host = "127.0.0.1";
  uint16_t data_port = 0;
  /// Why the data port may not listen on data_host (off loopback without
  /// a TLS decision), or ""; the warning to log when it listens there
  /// without TLS, or "".
  std::string data_host_problem;
  std::string data_host_warning;

  /// Reads the taskmanager.* keys (id: taskmanager.resource-id, else
  /// HOST-PID), cluster.registration.*, heartbeats, remoting and
  /// metrics.reporter.prom.*; leaves `jobmanagers` empty.
  static taskmanager_options from(const configuration& cfg);

  /// Why `metrics_port` cannot be used (one line naming the key), or "".
  std::string metrics_port_problem() const;
};

/// `total` split evenly over `slots` slots.
resource_profile per_slot(const resource_profile& total, int32_t slots);

/// Runs a TaskExecutor process until SIGINT or SIGTERM. It connects to the
/// jobmanager and registers, retrying with exponential backoff while no
/// master is reachable or after the master went away, so workers may start
/// before the master, until registration_timeout (when set) passed without
/// one. Serves its metrics when metrics_port is set. Returns the process
/// exit code: 0 after a signal, exit_bad_input, 3 when its metrics port
/// cannot be used, exit_jobmanager_unreachable.
int run_taskmanager(const taskmanager_options& opts);

} // namespace weir
