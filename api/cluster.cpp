#include "api/cluster.hpp"

#include <chrono>
#include <mutex>

#include <unistd.h>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <fmt/format.h>

#include "actors/task_executor/task_executor.hpp"
#include "client/dispatcher_jobs.hpp"
#include "client/submission.hpp"
#include "ha/gateway.hpp"
#include "ha/leader_jobs.hpp"
#include "cluster/mini_cluster.hpp"
#include "cluster/runtime_config.hpp"
#include "config/config.hpp"
#include "messages/errors.hpp"
#include "net/transport.hpp"
#include "operators/library_loader.hpp"

namespace weir {

namespace {

using namespace std::chrono_literals;

caf::expected<configuration>
configuration_of(const std::map<std::string, std::string>& values,
                 const std::string& origin) {
  configuration cfg;
  if (auto err = cfg.apply(values, origin))
    return err;
  return cfg;
}

} // namespace

void prepare_actor_system(caf::actor_system_config& cfg) {
  configure_actor_system(cfg);
}

caf::error
prepare_remote_actor_system(caf::actor_system_config& cfg,
                            const std::map<std::string, std::string>& config) {
  auto settings = configuration_of(config, "prepare_remote_actor_system");
  if (!settings)
    return settings.error();
  configure_actor_system(cfg, remoting::from(*settings));
  return {};
}

// -- cluster_client -------------------------------------------------------------

/// The client's job service and the lock its callers take turns with.
struct cluster_client::service {
  std::mutex mtx;
  std::shared_ptr<client::job_service> jobs;

  template <class F>
  auto call(F f) {
    std::lock_guard<std::mutex> guard{mtx};
    return f(*jobs);
  }
};

cluster_client::cluster_client(caf::actor_system& sys,
                               std::shared_ptr<client::job_service> jobs,
                               bool in_process)
  : sys_(sys), service_(std::make_shared<service>()), in_process_(in_process) {
  service_->jobs = std::move(jobs);
}

caf::expected<job_id> cluster_client::submit(const job_definition& job,
                                             const submit_options& opts) {
  if (!in_process_)
    if (auto why = plugin::cannot_travel(job); !why.empty())
      return make_error(errc::invalid_job, why);
  user_code code;
  std::vector<std::pair<std::string, std::string>> blobs; // hash, bytes
  std::vector<std::string> paths;
  for (auto& path : opts.libraries) {
    auto blob = client::read_blob("library", path, blobs);
    if (!blob)
      return blob.error();
    paths.push_back(blob->origin);
    code.libraries.push_back(std::move(*blob));
  }
  for (auto& path : opts.files) {
    auto blob = client::read_blob("file", path, blobs);
    if (!blob)
      return blob.error();
    code.files.push_back(std::move(*blob));
  }
  // The operators of this process (built-in ones, the program's named
  // functions and in-process steps: registry::find) and the libraries'.
  const ops::registry* operators = nullptr;
  try {
    operators = &ops::registry_for(paths);
  } catch (const std::exception& e) {
    return make_error(errc::invalid_job, e.what());
  }
  client::job_settings settings;
  settings.parallelism = opts.parallelism;
  settings.config = opts.config;
  settings.savepoint_path = opts.savepoint_path;
  settings.allow_non_restored_state = opts.allow_non_restored_state;
  auto graph = client::plan_job(job.spec_json, "job '" + job.name + "'",
                                settings, *operators);
  if (!graph)
    return graph.error();
  graph->code = std::move(code);
  return service_->call([&](client::job_service& jobs) {
    return client::submit(jobs, *graph, std::move(blobs));
  });
}

caf::expected<job_result> cluster_client::wait(const job_id& id,
                                               bool partial_rows) {
  // A second at a time, so that other threads' calls get their turn.
  for (;;) {
    auto r = service_->call([&](client::job_service& jobs) {
      return jobs.await_result(id, 1s);
    });
    if (!r)
      return r.error();
    if (*r) {
      if (!partial_rows)
        client::drop_partial_rows(**r);
      return std::move(**r);
    }
  }
}

caf::expected<job_result> cluster_client::run(const job_definition& job,
                                              const submit_options& opts) {
  auto id = submit(job, opts);
  if (!id)
    return id.error();
  return wait(*id, opts.partial_rows);
}

caf::expected<job_status> cluster_client::status(const job_id& id) {
  return service_->call(
    [&](client::job_service& jobs) { return jobs.status(id, false); });
}

caf::expected<std::vector<job_status>> cluster_client::list() {
  return service_->call([](client::job_service& jobs) { return jobs.list(); });
}

caf::expected<cancel_outcome> cluster_client::cancel(const job_id& id) {
  return service_->call(
    [&](client::job_service& jobs) { return jobs.cancel(id); });
}

caf::expected<std::string> cluster_client::savepoint(const job_id& id,
                                                     const std::string& dir,
                                                     bool stop) {
  return service_->call(
    [&](client::job_service& jobs) {
      return jobs.savepoint(id, dir,
                            stop ? savepoint_mode::stop
                                 : savepoint_mode::keep_running);
    });
}

// -- embedded_cluster -----------------------------------------------------------

embedded_cluster::embedded_cluster(caf::actor_system& sys,
                                   std::unique_ptr<mini_cluster> c)
  : cluster_client(sys,
                   std::make_shared<client::dispatcher_jobs>(sys,
                                                             c->dispatcher()),
                   true),
    cluster_(std::move(c)) {
}

caf::expected<std::unique_ptr<embedded_cluster>>
embedded_cluster::start(caf::actor_system& sys, const embedded_options& opts) {
  auto cfg = configuration_of(opts.config, "embedded_options.config");
  if (!cfg)
    return cfg.error();
  auto mc = mini_cluster_options::from(*cfg);
  mc.task_executors = opts.task_executors;
  mc.slots_per_task_executor = opts.slots_per_task_executor;
  mc.state_dir = opts.state_dir;
  mc.checkpoint_dir = checkpoint_dir_of(*cfg, opts.state_dir);
  auto c = start_local_cluster(sys, mc, "embedded");
  if (!c)
    return c.error();
  return std::unique_ptr<embedded_cluster>(
    new embedded_cluster(sys, std::move(*c)));
}

embedded_cluster::~embedded_cluster() {
  stop();
}

void embedded_cluster::stop() {
  if (cluster_)
    cluster_->stop();
}

// -- remote_access ----------------------------------------------------------------

caf::expected<std::unique_ptr<remote_access>>
remote_access::start(caf::actor_system& sys,
                     const std::map<std::string, std::string>& config) {
  auto cfg = configuration_of(config, "remote_access::start");
  if (!cfg)
    return cfg.error();
  auto r = remoting::from(*cfg);
  if (auto err = net::start_transport(sys, r.transport, nullptr))
    return err;
  return std::unique_ptr<remote_access>(new remote_access(
    sys, r.cluster_id, std::make_shared<const configuration>(*cfg)));
}

remote_access::~remote_access() {
  net::stop_transport(sys_);
}

namespace {

caf::expected<std::pair<dispatcher_actor, resource_manager_actor>>
look_up(caf::actor_system& sys, const std::string& address,
        const std::string& cluster_id) {
  auto at = parse_endpoints(address);
  if (!at)
    return make_error(errc::invalid_config,
                      "'" + address + "' is not HOST:PORT");
  return connect_gateway(sys, *at, 10s, cluster_id);
}

} // namespace

caf::expected<cluster_client>
remote_access::connect(const std::string& address) {
  // A lost leader named through etcd is waited for (client.leader-wait),
  // said on stderr as the CLI says it.
  auto jobs = connect_jobs(address, *config_, [](const std::string& note) {
    fmt::print(stderr, "weir client: {}\n", note);
  });
  if (!jobs)
    return jobs.error();
  return cluster_client{sys_, std::shared_ptr<client::job_service>{
                                std::move(*jobs)}};
}

caf::expected<caf::actor>
remote_access::join(const std::string& address, int32_t slots) {
  auto handles = look_up(sys_, address, cluster_id_);
  if (!handles)
    return handles.error();
  task_executor_options te;
  te.id = resource_id{"embedded-" + std::to_string(::getpid())};
  te.slots = slots;
  te.own_thread = true;
  te.dispatcher = handles->first;
  return caf::actor_cast<caf::actor>(
    spawn_task_executor(sys_, te, handles->second));
}

} // namespace weir
