#include "process/processes.hpp"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <optional>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>

#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>

#include "actors/common/event_log.hpp"
#include "actors/common/signal_log.hpp"
#include "actors/task_executor/crash_watch.hpp"
#include "actors/task_executor/data_service.hpp"
#include "actors/task_executor/task_executor.hpp"
#include "actors/task_executor/task_metrics.hpp"
#include "cluster/local_state.hpp"
#include "cluster/mini_cluster.hpp"
#include "rest/server.hpp"
#include "cluster/runtime_config.hpp"
#include "cluster/state_dir.hpp"
#include "cluster/stop_signal.hpp"
#include "config/keys.hpp"
#include "net/address.hpp"
#include "messages/errors.hpp"
#include "net/transport.hpp"
#include "ha/etcd_store.hpp"
#include "storage/rocksdb_store.hpp"

namespace weir {

namespace {

using namespace std::chrono_literals;

/// Makes SIGINT/SIGTERM a `stop_atom` message to `self`: the process loops
/// wait on their mailbox rather than wake up every few milliseconds to look
/// at the flag (which cost an idle jobmanager about 1% of a core).
void stop_as_message(caf::scoped_actor& self) {
  call_on_stop([addr = self->address()] {
    if (auto whom = caf::actor_cast<caf::actor>(addr))
      caf::anon_send(whom, stop_atom_v);
  });
}

/// Waits `d` in the calling (non-actor) thread; a stop signal ends the
/// wait early (stop_as_message).
void pause(caf::scoped_actor& self, caf::timespan d) {
  if (!stop_requested())
    self->receive([](stop_atom) {}, caf::after(d) >> [] {});
}

/// Starts the guarded transport (TLS when enabled); false, after one line
/// on stderr and in the log, when its TLS files cannot be used.
bool start_transport(caf::actor_system& sys, const remoting& r,
                     const char* who) {
  auto settings = r.transport;
  settings.node = true; // a jobmanager or taskmanager
  auto err = net::start_transport(sys, settings, [](const std::string& line) {
    log_eventf("{}", line);
  });
  if (!err)
    return true;
  fmt::print(stderr, "weir {}: {}\n", who, describe(err));
  log_eventf("cannot start: {}", describe(err));
  return false;
}

/// The REST API of a jobmanager (nullptr: none, the default port was in
/// use); nothing when the configured port cannot be used. Logs its URL.
std::optional<std::unique_ptr<rest_server>>
start_rest(caf::actor_system& sys, supervisor_actor supervisor,
           const jobmanager_options& opts) {
  // DELETE /cluster stops this jobmanager as SIGTERM does.
  auto rest = rest_server::start(sys, std::move(supervisor),
                                 opts.job_master.config, opts.rest_address,
                                 opts.rest_port,
                                 [] { ::kill(::getpid(), SIGTERM); });
  if (!rest && !opts.rest_port_set) {
    log_eventf("WARNING: no REST API: {}; set rest.port (0: any free port)",
               describe(rest.error()));
    return std::unique_ptr<rest_server>{};
  }
  if (!rest) {
    log_eventf("{}", describe(rest.error()));
    return std::nullopt;
  }
  log_eventf("REST API at {}", (*rest)->url());
  if (!opts.rest_security_warning.empty())
    log_event(opts.rest_security_warning);
  return std::move(*rest);
}

/// The leadership a SIGCONT handler checks (nullptr: none).
std::atomic<const leadership*> continued_leader{nullptr};

void on_continue(int) {
  auto* lead = continued_leader.load();
  if (lead == nullptr || !lead->expired())
    return;
  log_event_from_signal_handler("lost the leadership: stopped past its etcd "
                                "lease; exiting (code 5)");
  ::_exit(exit_leadership_lost);
}

/// A process stopped (SIGSTOP, a frozen VM) past its lease ends the moment
/// it continues, in the signal handler: before its actors' overdue timers
/// could make them act (the watchdog thread would see it too, a little
/// later).
void end_when_continued_past_lease(const leadership& lead) {
  continued_leader = &lead;
  struct sigaction sa {};
  sa.sa_handler = on_continue;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  ::sigaction(SIGCONT, &sa, nullptr);
}

/// Waits as a standby until no other jobmanager holds the RocksDB lock of
/// the state directory, then opens it into `store`. Returns the exit code to
/// end with, or -1 once the store is open.
int claim_state_dir(caf::actor_system& sys, const jobmanager_options& opts,
                    std::shared_ptr<storage::kv_store>& store) {
  caf::scoped_actor waiter{sys};
  bool announced = false;
  for (;;) {
    if (!storage::rocksdb_store_locked(opts.state_dir)) {
      auto kv = open_state_dir(opts.state_dir, opts.remote.cluster_id);
      if (kv) {
        store = std::move(*kv);
        if (announced)
          log_eventf("took over {} as the leader", opts.state_dir);
        return -1;
      }
      if (kv.error() != make_error(errc::storage_locked)) {
        log_eventf("cannot open the state directory: {}", describe(kv.error()));
        return exit_cluster_error;
      }
    }
    if (!announced)
      log_eventf("standby: another jobmanager holds {}; waiting to take over",
                 opts.state_dir);
    announced = true;
    if (stop_requested())
      return 0;
    pause(waiter, 100ms);
  }
}

/// Waits, a standby saying why, until this jobmanager could use the
/// cluster's storage under `dir`: one that cannot must not take the
/// leadership from one that can. False when stopped.
bool wait_for_usable_storage(caf::actor_system& sys, const etcd_ha_options& ha,
                             const std::string& dir) {
  caf::scoped_actor waiter{sys};
  ha::etcd_client etcd{ha.endpoints, 2000ms};
  std::string said;
  for (;;) {
    auto problem = ha::etcd_store::usability_problem(
      etcd, dir, store_prefix(ha.cluster_id));
    if (problem.empty()) {
      if (!said.empty())
        log_eventf("the storage at {} is usable now", dir);
      return true;
    }
    if (problem != said)
      log_eventf("standby for cluster {}: cannot use the storage: {}; not "
                 "campaigning until it can",
                 ha.cluster_id, problem);
    said = problem;
    if (stop_requested())
      return false;
    pause(waiter, 1s);
  }
}

/// Campaigns in etcd until this jobmanager leads (a standby meanwhile),
/// then opens the cluster's store under `dir` into `store`. nullptr when
/// stopped or when the store cannot be opened (logged).
std::unique_ptr<leadership> lead_through_etcd(caf::actor_system& sys,
                                              const etcd_ha_options& ha,
                                              const std::string& dir,
                                              std::shared_ptr<storage::kv_store>& store) {
  if (!wait_for_usable_storage(sys, ha, dir + "/store"))
    return nullptr;
  bool waited = false;
  auto lead = leadership::campaign(
    ha, [] { return stop_requested(); },
    [&](const std::string& why) {
      waited = true;
      log_eventf("standby for cluster {} (etcd at {}): {}; waiting to take "
                 "over", ha.cluster_id, fmt::join(ha.endpoints, ","), why);
    });
  if (!lead)
    return nullptr;
  // Kept from the first moment: opening the store and recovering may take
  // longer than a lease.
  lead->keep([](const std::string& why) {
    // Nothing of this process may act once another could lead: no teardown
    // (it would send messages), only the log line.
    log_eventf("lost the leadership: {}; exiting (code {})", why,
               exit_leadership_lost);
    std::_Exit(exit_leadership_lost);
  });
  end_when_continued_past_lease(*lead);
  if (waited)
    log_eventf("took over cluster {} as the leader", ha.cluster_id);
  auto kv = ha::etcd_store::open(
    lead->etcd(), dir + "/store", store_prefix(ha.cluster_id), lead->fence(),
    [l = lead.get()](const std::string& why) { l->lose(why); });
  if (!kv) {
    log_eventf("cannot open the cluster's store: {}", describe(kv.error()));
    return nullptr;
  }
  store = std::move(*kv);
  return lead;
}

} // namespace

int run_jobmanager(const jobmanager_options& opts) {
  catch_stop_signals();
  // Whatever it waits for (a standby for the lock, a teardown for a peer),
  // a stopped jobmanager ends.
  end_process_after_stop("jobmanager", 0);
  // Declared before the actor system, so ended after it: the lease is
  // revoked (a standby may lead) only once every actor of this one stopped.
  std::unique_ptr<leadership> lead;
  // Destroyed before `lead`: the SIGCONT handler lets go of it first.
  struct forget_leader {
    ~forget_leader() { continued_leader = nullptr; }
  } forget;
  caf::actor_system_config cfg;
  configure_actor_system(cfg, opts.remote);
  caf::actor_system sys{cfg};
  if (!start_transport(sys, opts.remote, "jobmanager"))
    return exit_bad_input;
  net::transport_scope transport{sys};
  // The REST API's TLS files are checked before anything starts, as the
  // transport's are (a standby would only find out when it takes over).
  if (auto err = rest_server::check_config(opts.job_master.config)) {
    fmt::print(stderr, "weir jobmanager: {}\n", describe(err));
    log_eventf("cannot start: {}", describe(err));
    return exit_bad_input;
  }
  mini_cluster_options mc;
  mc.task_executors = 0;
  mc.state_dir = opts.state_dir;
  if (opts.etcd) {
    // The cluster's files live in its own subdirectory of the shared one.
    mc.state_dir = opts.state_dir + "/" + opts.etcd->cluster_id;
    lead = lead_through_etcd(sys, *opts.etcd, mc.state_dir, mc.store);
    if (!lead)
      return stop_requested() ? 0 : exit_cluster_error;
  } else if (int code = claim_state_dir(sys, opts, mc.store); code >= 0) {
    return code;
  }
  mc.checkpoint_dir = checkpoint_dir_of(opts.job_master.config, mc.state_dir);
  mc.resource_manager = opts.resource_manager;
  mc.job_master = opts.job_master;
  if (lead) // frozen past the lease, it acts on nothing until its end
    mc.job_master.leading = [l = lead.get()] { return !l->expired(); };
  mc.supervision = opts.supervision;
  mc.application_mode = opts.application;
  auto cluster = mini_cluster::start(sys, mc);
  if (!cluster) {
    log_eventf("cannot open the state directory: {}", describe(cluster.error()));
    return 3;
  }
  auto gateway = spawn_gateway(sys, (*cluster)->supervisor());
  auto port = net::publish(sys, caf::actor_cast<caf::strong_actor_ptr>(gateway),
                          sys.message_types(gateway), opts.port, opts.address);
  if (!port) {
    log_eventf("cannot listen on {}:{}: {}", opts.address, opts.port,
               sys.render(port.error()));
    (*cluster)->stop();
    caf::anon_send_exit(gateway, caf::exit_reason::user_shutdown);
    return 3;
  }
  auto rest = start_rest(sys, (*cluster)->supervisor(), opts);
  if (!rest) {
    sys.middleman().unpublish(gateway, *port);
    caf::anon_send_exit(gateway, caf::exit_reason::user_shutdown);
    (*cluster)->stop();
    return exit_cluster_error;
  }
  log_eventf("listening on {}:{}, state in {}, {}{}", opts.address, *port,
             opts.state_dir,
             opts.remote.transport.tls ? "with TLS" : "without TLS",
             *rest ? ", REST API at " + (*rest)->url() : std::string{});
  if (!opts.security_warning.empty())
    log_event(opts.security_warning);
  if (lead) {
    auto address = fmt::format("{}:{}", opts.address, *port);
    // Clients elsewhere need an address they can reach: rest.address when
    // set (a REST API bound to 0.0.0.0 is reached at the host's name).
    auto rest_url = *rest ? (*rest)->url() : std::string{};
    if (*rest && !opts.rest_advertised.empty())
      rest_url = fmt::format("{}://{}:{}",
                             rest_url.rfind("https", 0) == 0 ? "https"
                                                             : "http",
                             opts.rest_advertised,
                             rest_url.substr(rest_url.rfind(':') + 1));
    if (auto err = lead->publish(address, rest_url)) {
      log_eventf("cannot publish this leader's address: {}", describe(err));
      end_process_after("jobmanager", exit_leadership_lost);
      return exit_leadership_lost;
    }
    log_eventf("leads cluster {}: published {} in etcd at {}",
               opts.etcd->cluster_id, address, lead->etcd()->endpoints());
  }
  if (opts.application)
    caf::anon_send((*cluster)->supervisor(), start_atom_v,
                   fmt::format("{}:{}", opts.address, *port));
  // The supervisor restarts a crashed Dispatcher or ResourceManager; when
  // it gives up, the process exits non-zero so that whatever runs it (a
  // shell loop, systemd) starts it again; the state directory lets it
  // recover its jobs.
  caf::scoped_actor self{sys};
  stop_as_message(self);
  self->monitor((*cluster)->supervisor());
  int code = 0;
  bool ended = false;
  while (!stop_requested() && !ended)
    self->receive([](stop_atom) {},
      [&](caf::down_msg& dm) {
        ended = true;
        auto is = [&](errc x) {
          return dm.reason.category() == errc_category()
                 && dm.reason.code() == static_cast<uint8_t>(x);
        };
        if (is(errc::application_finished)) {
          log_eventf("the application finished; shutting down");
        } else if (is(errc::application_failed)) {
          log_eventf("the application failed; shutting down");
          code = exit_job_failed;
        } else if (is(errc::storage_corrupt)) {
          log_eventf("cannot recover the jobs: {}", describe(dm.reason));
          code = exit_cluster_error;
        } else {
          log_eventf("exiting: {}", describe(dm.reason));
          code = exit_supervision_gave_up;
        }
      });
  if (ended) {
    // Exiting means exiting: in every role (a standby that took over too),
    // whatever the teardown waits for.
    end_process_after("jobmanager", code);
    rest.reset();
    caf::anon_send_exit(gateway, caf::exit_reason::user_shutdown);
    (*cluster)->stop();
    return code;
  }
  log_eventf("shutting down");
  rest.reset();
  sys.middleman().unpublish(gateway, *port);
  caf::anon_send_exit(gateway, caf::exit_reason::user_shutdown);
  (*cluster)->stop();
  return 0;
}

/// A taskmanager's Prometheus endpoint when metrics.reporter.prom.port is
/// set (nullptr: not set); nothing, after one line on stderr and in the
/// log, when it cannot listen.
std::optional<std::unique_ptr<metrics_server>>
start_metrics(const taskmanager_options& opts,
              std::shared_ptr<task_metrics> metrics) {
  auto ports = parse_port_range(opts.metrics_port);
  if (!ports)
    return std::unique_ptr<metrics_server>{};
  auto server = metrics_server::start(
    std::move(metrics), opts.id, opts.metrics_address, *ports,
    metric_naming{opts.metrics_prefix, metric_host_name()});
  if (!server) {
    fmt::print(stderr, "weir taskmanager: {}\n", describe(server.error()));
    log_eventf("{}", describe(server.error()));
    return std::nullopt;
  }
  log_eventf("metrics at {}", (*server)->url());
  if (!net::is_loopback_address(opts.metrics_address))
    log_eventf("WARNING: the metrics endpoint on {} answers everyone who can "
               "reach it (metrics.reporter.prom.host): job and operator "
               "names, rates and this host's load",
               opts.metrics_address);
  return std::move(*server);
}

int run_taskmanager(const taskmanager_options& opts) {
  catch_stop_signals();
  // A subtask stuck in user code must not keep a stopped worker alive.
  end_process_after_stop("taskmanager", 0);
  if (auto problem = opts.metrics_port_problem(); !problem.empty()) {
    fmt::print(stderr, "weir taskmanager: {}\n", problem);
    return exit_bad_input;
  }
  if (!opts.data_host_problem.empty()) {
    fmt::print(stderr, "weir taskmanager: {}\n", opts.data_host_problem);
    return exit_bad_input;
  }
  // One per process: it outlives reconnections (new TaskExecutors).
  auto metrics = std::make_shared<task_metrics>();
  auto endpoint = start_metrics(opts, metrics);
  if (!endpoint)
    return exit_cluster_error;
  caf::actor_system_config cfg;
  configure_actor_system(cfg, opts.remote);
  caf::actor_system sys{cfg};
  if (!start_transport(sys, opts.remote, "taskmanager"))
    return exit_bad_input;
  net::transport_scope transport{sys};
  // User code that crashes this process is reported to its job.
  crash_watch crashes{sys};
  // One per process, as its transport: it outlives reconnections.
  data_service_options data_opts;
  data_opts.tm = resource_id{opts.id};
  data_opts.host = opts.data_host;
  data_opts.port = opts.data_port;
  data_opts.connect_timeout = opts.remote.transport.handshake_timeout;
  auto data = start_data_service(sys, data_opts);
  if (!data) {
    fmt::print(stderr, "weir taskmanager: {}\n", describe(data.error()));
    return exit_bad_input;
  }
  // Ends before the actor system, which would wait for it forever.
  struct data_service_scope {
    data_service_actor actor;
    ~data_service_scope() {
      caf::anon_send_exit(actor, caf::exit_reason::user_shutdown);
    }
  } data_scope{data->actor};
  log_eventf("data port listening on {}:{}", data->endpoint.host,
             data->endpoint.port);
  if (!opts.data_host_warning.empty())
    log_eventf("{}", opts.data_host_warning);
  caf::scoped_actor self{sys};
  stop_as_message(self);
  auto local_state = claim_local_state_dir(opts.local_state_root);
  auto backoff = caf::timespan{opts.initial_backoff};
  auto max_backoff = caf::timespan{opts.max_backoff};
  // Since when no jobmanager has been reachable (registration_timeout).
  auto unreachable_since = std::chrono::steady_clock::now();
  // The TaskExecutor: one per connection, or one that outlives a lost
  // jobmanager while it keeps subtasks for the next one to adopt.
  task_executor_actor worker;
  while (!stop_requested()) {
    // A short deadline: right after a master restart CAF may still hand out
    // the dead master's cached gateway, whose lookup never answers; the
    // next attempt (after the backoff) reaches the new one.
    auto handles = connect_gateway(sys, opts.jobmanagers, 500ms,
                                   opts.remote.cluster_id);
    if (!handles) {
      if (opts.registration_timeout.count() > 0
          && std::chrono::steady_clock::now() - unreachable_since
               >= opts.registration_timeout) {
        log_eventf("{}; giving up: no jobmanager reachable for {} ms "
                   "(taskmanager.registration.timeout)",
                   describe(handles.error()),
                   opts.registration_timeout.count());
        if (worker) { // it kept subtasks: they end before their state
          caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
          self->receive([](caf::down_msg&) {});
        }
        release_local_state_dir(local_state);
        // A subtask still waiting for the lost master (a driver) must not
        // keep the process in its teardown.
        end_process_after("taskmanager", exit_jobmanager_unreachable);
        return exit_jobmanager_unreachable;
      }
      log_eventf("{}; retrying in {} ms", describe(handles.error()),
                 std::chrono::duration_cast<std::chrono::milliseconds>(backoff)
                   .count());
      pause(self, backoff);
      backoff = std::min(backoff * 2, max_backoff);
      continue;
    }
    backoff = caf::timespan{opts.initial_backoff};
    if (worker) {
      // It kept its subtasks for the next jobmanager to adopt.
      // Its private interface: only this loop sends it that.
      caf::anon_send(caf::actor_cast<caf::actor>(worker), connect_atom_v,
                     handles->first, handles->second);
      log_eventf("registering again with the jobmanager, keeping the "
                 "subtasks that run");
    } else {
    task_executor_options te;
    te.id = resource_id{opts.id};
    te.slots = opts.slots;
    te.slot_profile = per_slot(opts.resources, opts.slots);
    te.heartbeat = opts.heartbeat;
    te.own_thread = true;
    te.network = opts.network;
    te.local_state_dir = local_state;
    te.dispatcher = handles->first;
    te.metrics = metrics;
    te.data = data->actor;
    te.data_port = data->endpoint;
    te.registry = data->registry;
    te.keep_tasks = opts.keep_tasks;
    te.owner = caf::actor_cast<caf::actor>(self);
    worker = spawn_task_executor(sys, te, handles->second);
    self->monitor(worker);
    log_eventf("registering with the jobmanager ({} slots)", opts.slots);
    }
    bool down = false;
    bool lost = false;
    while (!down && !lost && !stop_requested())
      self->receive([&](caf::down_msg& dm) { down = dm.source == worker; },
                    [&](lost_atom, std::string&) { lost = true; },
                    [](stop_atom) {});
    if (!down && !lost) {
      caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
      self->receive([](caf::down_msg&) {});
      worker = nullptr;
      break;
    }
    if (down)
      worker = nullptr;
    unreachable_since = std::chrono::steady_clock::now();
    log_eventf("lost the jobmanager; reconnecting");
  }
  if (worker) {
    // Registration gave up or a stop came while it kept subtasks.
    caf::anon_send_exit(worker, caf::exit_reason::user_shutdown);
    self->receive([](caf::down_msg&) {});
  }
  release_local_state_dir(local_state);
  log_eventf("shutting down");
  return 0;
}

} // namespace weir
