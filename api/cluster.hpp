#pragma once

// Embedding weir in a host program (docs/cpp-api.md § Reference): start a
// cluster inside the host's own actor system, or connect to a session
// cluster as a client, or join one as a TaskExecutor; submit jobs built
// with api/job_builder.hpp and follow them.
//
// The blocking calls of cluster_client are for the host's own threads (its
// main(), say, or a detached actor), never for its event-based actors.
//
// Part of the installed public surface (docs/cpp-api.md § Reference): it
// names no actor of the runtime, so the cluster's internal protocols can
// change without breaking host programs.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor.hpp>
#include <caf/expected.hpp>

#include "messages/ids.hpp"
#include "messages/job_result.hpp"
#include "operators/driver.hpp"

namespace caf {
class actor_system;
class actor_system_config;
} // namespace caf

namespace weir {

class configuration;
class mini_cluster;

namespace client {
class job_service;
} // namespace client

using plugin::job_definition;

/// Prepares a host's actor system config for weir: weir's message types
/// and scheduler defaults.
void prepare_actor_system(caf::actor_system_config& cfg);

/// As above, and CAF's middleman with weir's settings, to connect to or
/// join a session cluster (remote_access). `config`: configuration keys,
/// e.g. high-availability.cluster-id and heartbeat.*; errors name the key.
[[nodiscard]] caf::error
prepare_remote_actor_system(caf::actor_system_config& cfg,
                            const std::map<std::string, std::string>& config
                            = {});

/// How a job is submitted, besides the job itself: `weir run`'s flags.
struct submit_options {
  /// The default parallelism of steps without their own (`-p`).
  std::optional<int32_t> parallelism;
  /// User libraries shipped with the job (`--libjars`): their operators
  /// and WEIR_MAP functions run on the workers, which load them.
  std::vector<std::string> libraries;
  /// Files attached to the job (`--file`), found by file name.
  std::vector<std::string> files;
  /// A savepoint or retained checkpoint the job starts from (`-s`; Flink's
  /// SavepointRestoreSettings): its state must fit the job's steps, named
  /// as when it was taken (stream::name).
  std::string savepoint_path;
  /// State of the savepoint that no step claims is skipped instead of
  /// refused (`-n`, --allowNonRestoredState).
  bool allow_non_restored_state = false;
  /// Configuration keys of the job (`-D`, as a spec's "config"), e.g.
  /// {"restart-strategy.type", "none"}; keys a job may not set are refused.
  std::map<std::string, std::string> config;
  /// For run(): keep the rows a job that did not finish had collected
  /// (wait()'s `partial_rows`).
  bool partial_rows = false;
};

/// A cluster the host talks to: one in this process through its
/// Dispatcher, a session cluster through its REST API. Its calls may come
/// from several threads; they take turns.
class cluster_client {
public:
  /// A cluster reached through `jobs` (remote_access::connect makes
  /// them); `in_process`: it runs in this process (in-process steps
  /// allowed).
  cluster_client(caf::actor_system& sys,
                 std::shared_ptr<client::job_service> jobs,
                 bool in_process = false);
  virtual ~cluster_client() = default;

  /// Checks the job like `weir run` checks a spec (its operators, their
  /// parameters, its schemas), ships its libraries and files, and submits
  /// it. Errors: one line naming the step or the file (`errc::invalid_job`),
  /// or why a job with in-process steps cannot go to a cluster in another
  /// process (plugin::cannot_travel).
  [[nodiscard]] caf::expected<job_id> submit(const job_definition& job,
                               const submit_options& opts = {});

  /// Blocks until job `id` has ended; its result (state, error, counters,
  /// one table of rows per collect sink: job_result::table). A job that
  /// did not finish comes back with empty tables unless `partial_rows`.
  /// A session cluster's jobmanager that goes away meanwhile is
  /// `errc::peer_lost` (with standbys or etcd: the new leader is followed).
  [[nodiscard]] caf::expected<job_result> wait(const job_id& id,
                                               bool partial_rows = false);

  /// submit, then wait.
  [[nodiscard]] caf::expected<job_result>
  run(const job_definition& job, const submit_options& opts = {});

  [[nodiscard]] caf::expected<job_status> status(const job_id& id);
  /// Every job of the cluster, running and ended (`weir list -a`).
  [[nodiscard]] caf::expected<std::vector<job_status>> list();
  [[nodiscard]] caf::expected<cancel_outcome> cancel(const job_id& id);
  /// A savepoint of a running job into `dir` (stopping it after, when
  /// `stop`); its path.
  [[nodiscard]] caf::expected<std::string> savepoint(const job_id& id,
                                       const std::string& dir,
                                       bool stop = false);

  caf::actor_system& system() const { return sys_; }
  /// Whether the cluster runs in this process (in-process steps allowed).
  bool in_process() const { return in_process_; }

private:
  struct service;
  caf::actor_system& sys_;
  std::shared_ptr<service> service_;
  bool in_process_;
};

/// Options of an embedded cluster.
struct embedded_options {
  int32_t task_executors = 1;
  int32_t slots_per_task_executor = 4;
  /// A state directory (RocksDB) whose unfinished jobs are recovered at
  /// start; "" keeps jobs in memory.
  std::string state_dir;
  /// Configuration keys as in a configuration file (docs/configuration.md),
  /// e.g. {"restart-strategy.type", "fixed-delay"}; errors name the key.
  std::map<std::string, std::string> config;
};

/// A whole cluster inside the host's actor system (Flink's MiniCluster).
/// Destroying it stops it.
class embedded_cluster : public cluster_client {
public:
  [[nodiscard]] static caf::expected<std::unique_ptr<embedded_cluster>>
  start(caf::actor_system& sys, const embedded_options& opts = {});

  ~embedded_cluster() override;

  /// Tells every actor of the cluster to quit (idempotent).
  void stop();

private:
  embedded_cluster(caf::actor_system& sys, std::unique_ptr<mini_cluster> c);

  std::unique_ptr<mini_cluster> cluster_;
};

/// Access to session clusters from a host program: connecting as a client,
/// joining as a TaskExecutor. The host's actor system must have been
/// prepared with prepare_remote_actor_system(); declare this right after
/// the system (it stops weir's transport before the system ends).
class remote_access {
public:
  /// `config`: configuration keys, e.g. high-availability.cluster-id and
  /// the security.ssl.internal.* keys of a TLS cluster.
  [[nodiscard]] static caf::expected<std::unique_ptr<remote_access>>
  start(caf::actor_system& sys,
        const std::map<std::string, std::string>& config = {});

  ~remote_access();

  /// A client of the session cluster whose jobmanager's REST API is at
  /// "HOST:PORT" (rest.port; "http://" or "https://" in front to choose,
  /// else HTTPS when `config` secures the REST API), "HOST:PORT,HOST:PORT"
  /// with standbys, or "etcd://HOST:PORT" for the leader that etcd names.
  /// Clients never speak the cluster's own protocol (docs/security.md).
  [[nodiscard]] caf::expected<cluster_client> connect(const std::string& address);

  /// Joins the session cluster whose jobmanager's RPC port is at
  /// "HOST:PORT" (jobmanager.rpc.port) as a TaskExecutor offering
  /// `slots` slots; it runs in the host's actor system until the host
  /// sends it an exit message or the jobmanager goes away. The actor is
  /// returned untyped: to monitor it and to stop it, its protocol is the
  /// cluster's own.
  [[nodiscard]] caf::expected<caf::actor> join(const std::string& address,
                                               int32_t slots);

private:
  remote_access(caf::actor_system& sys, std::string cluster_id,
                std::shared_ptr<const configuration> config)
    : sys_(sys), cluster_id_(std::move(cluster_id)),
      config_(std::move(config)) {}
  caf::actor_system& sys_;
  /// high-availability.cluster-id: whose leader etcd is asked for.
  std::string cluster_id_;
  /// The keys start() was given (the REST API's TLS).
  std::shared_ptr<const configuration> config_;
};

} // namespace weir
