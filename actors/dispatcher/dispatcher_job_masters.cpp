#include "actors/dispatcher/dispatcher_state.hpp"

#include <stdexcept>

#include <fmt/format.h>

#include "actors/common/event_log.hpp"
#include "config/fault_keys.hpp"
#include "config/keys.hpp"
#include "messages/errors.hpp"
#include "plan/schemas.hpp"
#include "storage/job_graph_store.hpp"

namespace weir::dispatcher_detail {

namespace {

/// Driver mode: cancels what the application rules say, and ends an
/// application cluster with its application.
void on_application_progress(self_ptr self,
                             const application_tracker::decision& d) {
  auto& st = self->state;
  cancel_jobs(self, d.cancel, "its application is ending");
  if (!d.ended)
    return;
  log_eventf("application {} ended {}{}{}", d.ended->to_string(),
             d.status == 0 ? "FINISHED" : "FAILED",
             d.error.empty() ? "" : ": ", d.error);
  if (!st.application_mode)
    return;
  auto reason = make_error(d.status == 0 ? errc::application_finished
                                         : errc::application_failed,
                           d.error);
  if (st.jm_opts.print_driver_output) {
    self->quit(std::move(reason)); // detached: nobody waits for the result
    return;
  }
  st.ending = std::move(reason);
  st.ending_app = *d.ended;
  self->delayed_send(self, result_linger, end_atom_v);
}

#if WEIR_FAULT_INJECTION
/// Test hook (weir.fault.dispatcher-crash): whether the Dispatcher crashes
/// once job `id` has ended.
bool crashes_after(self_ptr self, const job_id& id) {
  auto* entry = self->state.jobs.find(id);
  if (entry == nullptr)
    return false;
  auto cfg = self->state.jm_opts.config;
  return !cfg.apply(entry->graph.config, "job config")
         && cfg.get(keys::fault_dispatcher_crash);
}
#endif

/// A JobMaster crashed: it is started again on the stored JobGraph
/// (one-for-one), with a backoff, within the job's restart intensity; past
/// it the job fails and its result is stored (it is not recovered again).
/// One job's crashes never end the Dispatcher.
void on_job_master_crash(self_ptr self, job_entry& entry,
                         const caf::error& why) {
  auto& st = self->state;
  auto id = entry.graph.id;
  auto reason = describe(why);
  auto d = st.jobs.job_master_crashed(id, self->clock().now(), reason,
                                      now_ms());
  if (!d.restart) {
    log_eventf("job {} ({}): JobMaster crashed ({}); failing the job after {}",
               id.to_string(), entry.graph.name, reason, d.limit);
    complete(self, std::move(d.failure));
    return;
  }
  log_eventf("job {} ({}): JobMaster crashed ({}); restarting it{} ({} of {})",
             id.to_string(), entry.graph.name, reason,
             d.delay.count() > 0 ? fmt::format(" in {} ms", d.delay.count())
                                 : "",
             d.restarts, d.limit);
  if (d.delay.count() > 0)
    self->delayed_send(self, d.delay, restart_atom_v, id, entry.incarnation);
  else
    restart_job_master(self, id, entry.incarnation);
}

} // namespace

void start_job_master(self_ptr self, job_entry& entry) {
  auto& st = self->state;
  if (st.jm_opts.leading && !st.jm_opts.leading()) {
    // Its watchdog ends this process in a moment; a standby leads.
    log_eventf("job {} ({}): no JobMaster started, this jobmanager lost the "
               "leadership",
               entry.graph.id.to_string(), entry.graph.name);
    return;
  }
  auto opts = st.jm_opts;
  opts.incarnation = ++entry.incarnation;
  // The workers of a crashed JobMaster stayed registered: what they kept is
  // known at once. Those of a job this jobmanager recovered may still be
  // reconnecting: it waits for them, unless the reconcile timeout is 0
  // (an embedded cluster, whose workers start with it, keeps nothing).
  bool restarted = opts.incarnation > 0;
  opts.takes_over = restarted
                    || (entry.recovered && opts.reconcile_timeout.count() > 0);
  if (restarted || !entry.recovered)
    opts.reconcile_timeout = {};
  opts.store = st.store;
  auto jm = st.make_job_master(self->system(), entry.graph, opts,
                               caf::actor_cast<dispatcher_actor>(self), st.rm);
  self->monitor(jm);
  st.jobs.started(entry, std::move(jm), st.rm.address());
}

void cancel_jobs(self_ptr self, const std::vector<job_id>& ids,
                 const char* why) {
  auto& st = self->state;
  for (auto& id : ids) {
    auto* entry = st.jobs.find(id);
    if (entry == nullptr || entry->result)
      continue;
    log_eventf("job {} ({}) is cancelled: {}", id.to_string(),
               entry->graph.name, why);
    if (entry->jm)
      self->request(entry->jm, store_timeout, cancel_atom_v)
        .then([](const cancel_outcome&) {}, [](caf::error&) {});
    else
      entry->cancel_requested = true;
  }
}

void complete(self_ptr self, job_result result) {
  auto& st = self->state;
  auto id = result.id;
  auto* entry = st.jobs.begin_completion(std::move(result));
  if (entry == nullptr)
    return;
  auto& pending = *entry->completing;
  if (!entry->graph.vertices.empty())
    pending.graph_fingerprint = storage::job_graph_fingerprint(entry->graph);
  auto finish = [=](const std::string& problem) {
    auto& ended = self->state.jobs.completed(id, problem);
    auto& r = *ended.result;
    log_eventf("job {} ({}) {}{}{}", id.to_string(), r.name,
               to_string(r.state), r.error.empty() ? "" : ": ", r.error);
    on_application_progress(self, self->state.apps.ended(id, r.state, r.error));
#if WEIR_FAULT_INJECTION
    if (crashes_after(self, id))
      throw std::runtime_error(
        "injected Dispatcher crash (weir.fault.dispatcher-crash)");
#endif
  };
  auto stored = entry->unreadable
                  ? self->request(st.store, store_timeout, put_atom_v, pending)
                  : self->request(st.store, store_timeout, finish_atom_v,
                                  pending);
  stored.then([=](bool) { finish({}); },
          [=](caf::error& err) {
            finish("storing the job result failed: " + describe(err));
          });
}

void recover(self_ptr self, recovered_jobs& rec) {
  auto& st = self->state;
  for (auto& problem : rec.problems)
    log_problemf("weir: recovery skipped a record: {}", problem);
  for (auto& id : st.jobs.recover(rec, now_ms())) {
    auto& e = *st.jobs.find(id);
    log_eventf("job {} ({}) recovered", id.to_string(), e.graph.name);
    st.apps.submitted(id, e.graph.priority, e.graph.application);
    // A graph stored before rows has no schemas: derived now, with the
    // built-in operators (user operators get their role's defaults).
    if (auto err = derive_missing_schemas(e.graph)) {
      complete(self, job_table::failed_before_start(
                       id, e.graph.name,
                       "the recovered job cannot run: " + describe(err),
                       now_ms()));
      continue;
    }
    start_job_master(self, e);
  }
  // A job whose graph cannot be read fails alone; its stored result keeps
  // it from being tried again.
  for (auto& bad : rec.unreadable) {
    if (st.jobs.find(bad.id) != nullptr)
      continue; // it has a result
    job_graph stub;
    stub.id = bad.id;
    stub.name = "(unreadable)";
    auto& e = st.jobs.add(stub, now_ms());
    e.recovered = true;
    e.unreadable = true;
    log_problemf("weir: job {} cannot be recovered: {}", bad.id.to_string(),
                 bad.problem);
    complete(self, job_table::failed_before_start(
                     bad.id, stub.name,
                     "the stored job graph cannot be read: " + bad.problem,
                     now_ms()));
  }
}

void stop_job_masters(self_ptr self, const caf::error& reason) {
  for (auto& jm : self->state.jobs.job_masters())
    self->send_exit(jm, reason);
}

void restart_job_master(self_ptr self, job_id id, int32_t incarnation) {
  auto& st = self->state;
  auto* entry = st.jobs.restart_due(id, incarnation);
  if (entry == nullptr)
    return;
  if (entry->cancel_requested)
    complete(self, job_table::canceled_before_start(id, entry->graph.name,
                                                    now_ms()));
  else
    start_job_master(self, *entry);
}

/// A JobMaster ended without a result. It lost its ResourceManager: it is
/// started again with the new one. It crashed: on_job_master_crash.
void on_job_master_down(self_ptr self, const caf::down_msg& dm) {
  using end = job_table::job_master_end;
  auto& st = self->state;
  auto d = st.jobs.job_master_ended(dm.source,
                                    dm.reason == make_error(errc::leader_lost),
                                    st.rm.address());
  if (d.what == end::ignore || d.what == end::await_resource_manager)
    return;
  auto& entry = *st.jobs.find(d.job);
  if (d.what == end::restart)
    start_job_master(self, entry);
  else
    on_job_master_crash(self, entry, dm.reason);
}

} // namespace weir::dispatcher_detail
