#include "actors/dispatcher/dispatcher.hpp"

#include <map>

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include <fmt/format.h>

#include "actors/common/crash.hpp"
#include "actors/common/event_log.hpp"
#include "messages/errors.hpp"
#include "plan/validation.hpp"
#include "actors/dispatcher/applications.hpp"
#include "storage/job_graph_store.hpp"

namespace weir {

namespace {

using namespace std::chrono_literals;

/// Storage answers within this time or the request fails.
constexpr auto store_timeout = 60s;

struct job_entry {
  job_graph graph;
  job_master_actor jm;
  std::optional<job_result> result;
  /// The result is being stored; it is answered once that is done.
  bool completing = false;
  /// A cancel arrived before the job was stored and its JobMaster started.
  bool cancel_requested = false;
  int64_t submitted_ms = 0;
  /// JobMasters started for this job so far, minus one.
  int32_t incarnation = -1;
  /// The ResourceManager the current JobMaster talks to.
  caf::actor_addr rm_of_jm;
  /// The JobMaster ended with its ResourceManager; a new one starts with
  /// the next ResourceManager.
  bool awaiting_rm = false;
  /// Clients waiting for the result: the newest request of each client (a
  /// client that re-asks after a timeout replaces its older request).
  std::map<caf::actor_addr, caf::typed_response_promise<job_result>> waiting;
};

struct dispatcher_state {
  job_store_actor store;
  resource_manager_actor rm;
  job_master_options jm_opts;
  std::unique_ptr<restart_intensity> intensity;
  std::map<job_id, job_entry> jobs;
  std::map<caf::actor_addr, job_id> job_by_jm;
  /// Driver mode: applications, and whether this cluster ends with one.
  application_tracker apps;
  bool application_mode = false;
  static inline const char* name = "dispatcher";
};

using self_ptr = dispatcher_actor::stateful_pointer<dispatcher_state>;

void start_job_master(self_ptr self, job_entry& entry) {
  auto& st = self->state;
  auto opts = st.jm_opts;
  opts.incarnation = ++entry.incarnation;
  opts.store = st.store;
  entry.awaiting_rm = false;
  entry.rm_of_jm = st.rm.address();
  entry.jm = spawn_job_master(self->system(), entry.graph, opts,
                              dispatcher_actor{self}, st.rm);
  self->monitor(entry.jm);
  st.job_by_jm[entry.jm.address()] = entry.graph.id;
}

job_status status_from_result(const job_result& r) {
  job_status s;
  s.id = r.id;
  s.name = r.name;
  s.state = r.state;
  s.start_time_ms = r.start_time_ms;
  s.end_time_ms = r.end_time_ms;
  s.metrics = r.metrics;
  return s;
}

/// Driver mode: cancels what the application rules say, and ends an
/// application cluster with its application.
void on_application_progress(self_ptr self,
                             const application_tracker::decision& d) {
  auto& st = self->state;
  for (auto& id : d.cancel) {
    auto i = st.jobs.find(id);
    if (i == st.jobs.end() || i->second.result)
      continue;
    log_eventf("job {} ({}) is cancelled: its application is ending",
               id.to_string(), i->second.graph.name);
    if (i->second.jm)
      self->request(i->second.jm, store_timeout, cancel_atom_v)
        .then([](job_state) {}, [](caf::error&) {});
    else
      i->second.cancel_requested = true;
  }
  if (!d.ended)
    return;
  log_eventf("application {} ended {}{}{}", d.ended->to_string(),
             d.status == 0 ? "FINISHED" : "FAILED",
             d.error.empty() ? "" : ": ", d.error);
  if (st.application_mode)
    self->quit(make_error(d.status == 0 ? errc::application_finished
                                        : errc::application_failed,
                          d.error));
}

/// Stores the result, then answers everyone waiting for it.
void complete(self_ptr self, job_result result) {
  auto& st = self->state;
  auto i = st.jobs.find(result.id);
  if (i == st.jobs.end() || i->second.result || i->second.completing)
    return;
  if (!i->second.graph.vertices.empty())
    result.graph_fingerprint = storage::job_graph_fingerprint(i->second.graph);
  i->second.completing = true;
  auto id = result.id;
  auto finish = [=](job_result r) {
    log_eventf("job {} ({}) {}{}{}", r.id.to_string(), r.name,
               to_string(r.state), r.error.empty() ? "" : ": ", r.error);
    auto& entry = self->state.jobs[id];
    entry.completing = false;
    entry.result = std::move(r);
    entry.jm = nullptr;
    for (auto& [client, p] : entry.waiting)
      p.deliver(*entry.result);
    entry.waiting.clear();
    on_application_progress(
      self, self->state.apps.ended(id, entry.result->state, entry.result->error));
  };
  self->request(st.store, store_timeout, finish_atom_v, result)
    .then([=](bool) { finish(result); },
          [=](caf::error& err) {
            auto r = result;
            r.error += (r.error.empty() ? "" : "; ")
                       + std::string{"storing the job result failed: "}
                       + describe(err);
            finish(std::move(r));
          });
}

void recover(self_ptr self, recovered_jobs& rec) {
  auto& st = self->state;
  for (auto& problem : rec.problems)
    log_problemf("weir: recovery skipped a record: {}", problem);
  for (auto& r : rec.results) {
    auto& e = st.jobs[r.id];
    e.result = r;
  }
  for (auto& g : rec.graphs) {
    if (st.jobs.count(g.id) > 0)
      continue; // finished before: never run twice
    auto& e = st.jobs[g.id];
    e.graph = g;
    e.submitted_ms = now_ms();
    log_eventf("job {} ({}) recovered", g.id.to_string(), g.name);
    st.apps.submitted(g.id, g.priority, g.application);
    start_job_master(self, e);
  }
}

job_entry* find_job(self_ptr self, job_id id) {
  auto i = self->state.jobs.find(id);
  return i == self->state.jobs.end() ? nullptr : &i->second;
}

caf::error unknown_job(job_id id) {
  return make_error(errc::unknown_job, fmt::format("no job {}", id.to_string()));
}

caf::error not_running(job_id id) {
  return make_error(errc::job_not_running,
                    fmt::format("job {} is not running", id.to_string()));
}

/// A JobMaster ended without a result. It lost its ResourceManager: it is
/// started again with the new one. It crashed: it is started again on the
/// stored JobGraph (one-for-one) within the restart intensity; past that,
/// the Dispatcher gives up and ends, leaving the decision to its supervisor.
void on_job_master_down(self_ptr self, const caf::down_msg& dm) {
  auto& st = self->state;
  auto i = st.job_by_jm.find(dm.source);
  if (i == st.job_by_jm.end())
    return;
  auto id = i->second;
  st.job_by_jm.erase(i);
  auto& entry = st.jobs[id];
  if (entry.result || entry.completing)
    return;
  entry.jm = nullptr;
  auto& name = entry.graph.name;
  if (dm.reason == make_error(errc::leader_lost)) {
    if (entry.rm_of_jm != st.rm.address())
      start_job_master(self, entry);
    else
      entry.awaiting_rm = true;
    return;
  }
  auto reason = describe(dm.reason);
  if (!st.intensity->on_crash(self->clock().now())) {
    log_eventf("job {} ({}): JobMaster crashed ({}); giving up after {}",
               id.to_string(), name, reason, st.intensity->describe());
    for (auto& [other, e] : st.jobs)
      if (e.jm)
        self->send_exit(e.jm, caf::exit_reason::user_shutdown);
    self->quit(make_error(errc::supervision_gave_up,
                          fmt::format("JobMasters crashed more than {}",
                                      st.intensity->describe())));
    return;
  }
  log_eventf("job {} ({}): JobMaster crashed ({}); restarting it ({} of {})",
             id.to_string(), name, reason, st.intensity->recent(),
             st.intensity->describe());
  start_job_master(self, entry);
}

caf::result<job_id> submit(self_ptr self, job_graph& g) {
  auto& st = self->state;
  if (!g.id.valid())
    g.id = job_id::random();
  if (auto problem = validate_job_graph(g, dispatcher_validation());
      !problem.empty())
    return make_error(errc::invalid_job, problem);
  if (auto i = st.jobs.find(g.id); i != st.jobs.end()) {
    // Idempotent submission: the same job again answers with the existing
    // one. A job known only by its stored result (its graph is cleaned up)
    // is compared by the graph's fingerprint, by name for older results.
    auto& known = i->second;
    bool same = false;
    if (!known.graph.vertices.empty())
      same = known.graph == g;
    else if (known.result && known.result->graph_fingerprint != 0)
      same = known.result->graph_fingerprint
             == storage::job_graph_fingerprint(g);
    else
      same = known.result && known.result->name == g.name;
    if (same)
      return g.id;
    return make_error(errc::duplicate_job,
                      fmt::format("job {} already exists with a different "
                                  "graph",
                                  g.id.to_string()));
  }
  auto id = g.id;
  auto& entry = st.jobs[id];
  entry.graph = g;
  entry.submitted_ms = now_ms();
  auto rp = self->make_response_promise<job_id>();
  self->request(st.store, store_timeout, put_atom_v, std::move(g))
    .then(
      [=](bool) mutable {
        auto& entry = self->state.jobs[id];
        log_eventf("job {} ({}) submitted", id.to_string(), entry.graph.name);
        self->state.apps.submitted(id, entry.graph.priority,
                                   entry.graph.application);
        rp.deliver(id);
        if (entry.cancel_requested) {
          job_result r;
          r.id = id;
          r.name = entry.graph.name;
          r.state = job_state::canceled;
          r.error = "job was canceled";
          r.start_time_ms = r.end_time_ms = now_ms();
          complete(self, std::move(r));
          return;
        }
        start_job_master(self, entry);
      },
      [=](caf::error& err) mutable {
        self->state.jobs.erase(id);
        rp.deliver(make_error(errc::storage_failure,
                              "could not store the job: " + describe(err)));
      });
  return rp;
}

dispatcher_actor::behavior_type
dispatcher_impl(self_ptr self, job_store_actor store, resource_manager_actor rm,
                job_master_options jm_opts, supervision_options supervision,
                bool application_mode) {
  report_crashes(self);
  auto& st = self->state;
  st.application_mode = application_mode;
  st.intensity = std::make_unique<restart_intensity>(supervision.max_restarts,
                                                     supervision.within);
  st.store = std::move(store);
  st.rm = std::move(rm);
  st.jm_opts = jm_opts;
  self->set_down_handler(
    [=](caf::down_msg& dm) { on_job_master_down(self, dm); });
  // Going down takes the JobMasters along (they are monitored, not linked).
  self->set_exit_handler([=](caf::exit_msg& msg) {
    for (auto& [id, entry] : self->state.jobs)
      if (entry.jm)
        self->send_exit(entry.jm, msg.reason);
    self->quit(msg.reason);
  });
  // Recovery comes first: nothing else is served until it is done.
  self->request(st.store, store_timeout, load_atom_v)
    .await([=](recovered_jobs& rec) { recover(self, rec); },
           [=](caf::error& err) {
             log_problemf("weir: recovery failed: {}", describe(err));
             self->quit(err);
           });
  return {
    [=](submit_atom, job_graph& g) { return submit(self, g); },
    [=](blob_atom a, put_atom p, std::string& hash, std::string& bytes) {
      return self->delegate(self->state.store, a, p, std::move(hash),
                            std::move(bytes));
    },
    [=](list_atom) {
      std::vector<job_status> result;
      for (auto& [id, e] : self->state.jobs) {
        if (e.result) {
          result.push_back(status_from_result(*e.result));
        } else {
          job_status s;
          s.id = id;
          s.name = e.graph.name;
          s.state = e.jm ? job_state::running : job_state::created;
          s.start_time_ms = e.submitted_ms;
          result.push_back(std::move(s));
        }
      }
      return result;
    },
    [=](status_atom, job_id id, bool detailed) -> caf::result<job_status> {
      auto* entry = find_job(self, id);
      if (entry == nullptr)
        return unknown_job(id);
      if (entry->result)
        return status_from_result(*entry->result);
      if (!entry->jm) {
        job_status s;
        s.id = id;
        s.name = entry->graph.name;
        return s;
      }
      return self->delegate(entry->jm, status_atom_v, detailed);
    },
    [=](cancel_atom, job_id id) -> caf::result<job_state> {
      auto* entry = find_job(self, id);
      if (entry == nullptr)
        return unknown_job(id);
      if (entry->result)
        return entry->result->state;
      if (!entry->jm) {
        entry->cancel_requested = true;
        return job_state::cancelling;
      }
      return self->delegate(entry->jm, cancel_atom_v);
    },
    [=](collect_atom a, job_id id,
        int64_t offset) -> caf::result<std::vector<record>> {
      auto* entry = find_job(self, id);
      if (entry == nullptr)
        return unknown_job(id);
      if (entry->result) {
        auto& rows = entry->result->collected;
        auto from = std::min<size_t>(static_cast<size_t>(std::max<int64_t>(offset, 0)),
                                     rows.size());
        return std::vector<record>(rows.begin() + static_cast<std::ptrdiff_t>(from),
                                   rows.end());
      }
      if (!entry->jm)
        return std::vector<record>{};
      return self->delegate(entry->jm, a, offset);
    },
    [=](checkpoint_atom, job_id id, bool full) -> caf::result<int64_t> {
      auto* entry = find_job(self, id);
      if (entry == nullptr)
        return unknown_job(id);
      if (!entry->jm)
        return not_running(id);
      return self->delegate(entry->jm, checkpoint_atom_v, full);
    },
    [=](savepoint_atom, job_id id, std::string& dir,
        bool stop) -> caf::result<std::string> {
      auto* entry = find_job(self, id);
      if (entry == nullptr)
        return unknown_job(id);
      if (!entry->jm)
        return not_running(id);
      return self->delegate(entry->jm, savepoint_atom_v, std::move(dir), stop);
    },
    [=](result_atom, job_id id) -> caf::result<job_result> {
      auto* entry = find_job(self, id);
      if (entry == nullptr)
        return unknown_job(id);
      if (entry->result)
        return *entry->result;
      auto client = caf::actor_cast<caf::actor_addr>(self->current_sender());
      auto rp = self->make_response_promise<job_result>();
      entry->waiting.insert_or_assign(client, rp);
      return rp;
    },
    [=](done_atom, job_result& r) { complete(self, std::move(r)); },
    [=](rm_changed_atom, resource_manager_actor& rm) {
      auto& st = self->state;
      st.rm = std::move(rm);
      // JobMasters end with their ResourceManager (leader_lost); those
      // that already did start again now.
      for (auto& [id, entry] : st.jobs)
        if (entry.awaiting_rm && !entry.result && !entry.completing)
          start_job_master(self, entry);
    },
  };
}

} // namespace

dispatcher_actor spawn_dispatcher(caf::actor_system& sys, job_store_actor store,
                                  resource_manager_actor rm,
                                  job_master_options jm_opts,
                                  supervision_options supervision,
                                  bool application_mode) {
  return sys.spawn(dispatcher_impl, std::move(store), std::move(rm), jm_opts,
                   supervision, application_mode);
}

} // namespace weir
