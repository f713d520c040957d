// The JobMaster of one job: a thin actor around the execution graph and
// the plain classes of job_master_state.hpp.
//
//   CREATED ──schedule──▶ RUNNING ──all subtasks FINISHED──▶ FINISHED
//                          │ │ └─a failure, no restart left─▶ FAILING ──all stopped──▶ FAILED
//                          │ └─a failure, restart allowed─▶ RESTARTING ──all stopped, delay──▶ RUNNING
//                          └──cancel──▶ CANCELLING ──all stopped──▶ CANCELED
//
// A failure is a subtask that FAILED or died, or a lost TaskExecutor. A
// restart is a full one: every subtask is stopped, the slots are given back,
// and the job is scheduled again with new attempts, from the newest
// checkpoint when its sinks allow it (job_settings::resumable), else from
// its sources, so bounded jobs still produce exact results.
//
// Scheduling follows FLIP-6: request one slot per shared slot from the
// ResourceManager; TaskExecutors offer the slots; each accepted slot gets
// its subtasks deployed at once; once every subtask is deployed, each gets
// the handles of its consumers and starts.
#include "actors/job_master/job_master.hpp"

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "actors/common/crash.hpp"
#include "actors/job_master/job_master_state.hpp"
#include "messages/errors.hpp"
#include "messages/file_names.hpp"
#include "messages/record.hpp"

namespace weir {

namespace job_master_detail {

namespace {

/// Writes rows as the client prints them, one line each, and flushes: a
/// detached application's output must be in its file while it runs.
void print_lines(const row_batch& rows) {
  std::string out;
  for (size_t i = 0; i < rows.rows; ++i)
    append_row_text(out, rows, i);
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

/// Sets up the state: the graph, the job's settings (a bad job config fails
/// the job when it starts) and the classes built from them.
void init_state(self_ptr self, job_graph graph, job_master_options opts,
                dispatcher_actor dispatcher, resource_manager_actor rm) {
  auto& st = self->state;
  if (auto s = resolve_job_settings(opts.config, graph, opts.checkpoint_dir))
    st.settings = std::move(*s);
  else
    st.settings_problem = describe(s.error());
  st.opts = std::move(opts);
  st.collected = collected_results{st.opts.collect_max_bytes};
  // The vertices that make watermarks send them this often.
  for (auto& v : graph.vertices)
    v.watermarks.interval_ms = st.settings.auto_watermark_interval.count();
  st.scheduler = std::make_unique<jm_scheduler>(graph);
  if (st.settings.max_parallelism)
    if (auto err
        = st.scheduler->graph().set_max_parallelism(*st.settings.max_parallelism);
        err && st.settings_problem.empty())
      st.settings_problem = describe(err);
  if (st.settings.adaptive.enabled) {
    // Each vertex's upper bound: its parallelism, or (reactive) its key
    // groups.
    std::vector<int32_t> upper;
    for (size_t v = 0; v < graph.vertices.size(); ++v)
      upper.push_back(st.settings.adaptive.reactive
                        ? st.scheduler->graph().max_parallelism_of(
                          static_cast<int32_t>(v))
                        : graph.vertices[v].parallelism);
    st.adaptive.emplace(st.settings.adaptive, graph, std::move(upper));
  }
  st.dispatcher = std::move(dispatcher);
  st.rm = std::move(rm);
  st.start_time_ms = now_ms();
  st.job = std::make_unique<job_lifecycle>(st.settings.restarts);
  st.checkpoints = std::make_unique<checkpoint_coordinator>(
    st.settings.checkpoints, static_cast<int32_t>(st.scheduler->graph().size()));
  st.checkpoint_stats = checkpoint_history{st.settings.checkpoints.retained};
  st.hb = heartbeat_monitor{st.opts.heartbeat};
}

/// An error (logged once) unless `hash` is a content hash of one of the
/// job's libraries or files: a TaskExecutor fetches only those.
caf::error check_blob_request(self_ptr self, const std::string& hash) {
  auto err = check_content_hash("blob hash", hash);
  if (!err) {
    auto& code = self->state.scheduler->graph().graph().code;
    auto is_it = [&](const blob_ref& b) { return b.hash == hash; };
    if (std::any_of(code.libraries.begin(), code.libraries.end(), is_it)
        || std::any_of(code.files.begin(), code.files.end(), is_it))
      return caf::none;
    err = make_error(errc::blob_not_found,
                     fmt::format("the job has no blob {}", hash));
  }
  // Rate-limited: whoever holds this JobMaster's handle may ask again.
  if (auto line = self->state.refusals.admit(describe(err)))
    log_job(self, "refused a blob request: {}", *line);
  return err;
}

/// Without its Dispatcher or ResourceManager the JobMaster is of no use: it
/// ends, its TaskExecutors free its slots (they watch it), and the
/// Dispatcher starts another one for the job. A lost TaskExecutor or
/// subtask is a failure. A subtask reports its end before it ends, and
/// that report arrives before its down message (BASP messages are
/// deserialized in order: cluster/runtime_config.cpp), except the answer
/// to a monitor that came after the subtask had ended (below).
void on_down(self_ptr self, const caf::down_msg& dm) {
  auto& st = self->state;
  if (dm.source == st.dispatcher.address() || dm.source == st.rm.address()) {
    self->quit(make_error(errc::leader_lost, dm.source == st.rm.address()
                                               ? "the ResourceManager is gone"
                                               : "the Dispatcher is gone"));
    return;
  }
  if (st.executors.count(dm.source) > 0) {
    on_executor_lost(self, dm.source, caf::to_string(dm.reason));
    return;
  }
  auto found = st.scheduler->subtasks().execution_of(dm.source);
  if (!found)
    return;
  auto flat = *found;
  auto& execution = st.scheduler->graph().executions()[static_cast<size_t>(flat)];
  if (is_terminal(execution.state))
    return;
  auto cause = "subtask terminated unexpectedly: " + caf::to_string(dm.reason);
  // A remote subtask that ended before the JobMaster watched it (it fails
  // while it initializes, before the deployment's answer came) is reported
  // with reason "unknown", and that answer can overtake the subtask's own
  // last report: give the report time to arrive before failing it so.
  if (dm.reason == caf::exit_reason::unknown) {
    self->delayed_send(self, std::chrono::seconds(2), exited_atom_v,
                       execution.attempt, std::move(cause));
    return;
  }
  st.scheduler->graph().transition(flat, execution_state::failed);
  on_task_failure(self, cause, self->state.scheduler->site_of(flat));
  maybe_finalize(self);
}

/// A client's cancel; the reply is the job's state before and after it.
/// Prompt in every state: subtasks not deployed yet (waiting for slots,
/// being deployed) are canceled at once, running ones are told to stop, and
/// a restart's pending delay is dropped.
cancel_outcome on_cancel(self_ptr self) {
  auto& st = self->state;
  auto from = st.job->state();
  if (st.job->cancel()) {
    log_transition(self, from);
    cancel_all(self);
  }
  return cancel_outcome{from, st.job->state()};
}

/// "300 s", or "1500 ms" when not whole seconds (as the key is written).
std::string seconds_or_ms(std::chrono::milliseconds d) {
  if (d.count() % 1000 == 0)
    return fmt::format("{} s", d.count() / 1000);
  return fmt::format("{} ms", d.count());
}

/// The slot request of round `epoch` timed out if slots are still missing.
void on_slot_request_timeout(self_ptr self, uint64_t epoch) {
  auto& st = self->state;
  if (epoch != st.job->epoch() || st.scheduler->slots().pending() == 0
      || st.job->state() != job_state::running)
    return;
  if (st.adaptive) {
    resize_round(self, fmt::format("{} of {} slots did not come",
                                   st.scheduler->slots().pending(),
                                   st.scheduler->graph().slots_needed()));
    return;
  }
  if (st.rescale.current() == rescale_operation::phase::deploying) {
    // The slots a rescale counted on went elsewhere: back to the old
    // parallelism, whose slots were free when it began.
    rescale_failed(self, fmt::format("could not get {} of {} slots within "
                                     "slot.request.timeout",
                                     st.scheduler->slots().pending(),
                                     st.scheduler->graph().slots_needed()));
    set_state(self, job_state::restarting);
    cancel_all(self);
    return;
  }
  fail_job(self, fmt::format("could not get {} of {} slots within "
                             "slot.request.timeout ({}){}{}",
                             st.scheduler->slots().pending(), st.scheduler->graph().slots_needed(),
                             seconds_or_ms(st.settings.slot_request_timeout),
                             st.scheduler->slots_unmet().empty() ? "" : ": ",
                             st.scheduler->slots_unmet()));
}

job_master_self_actor::behavior_type
job_master_impl(self_ptr self, job_graph graph, job_master_options opts,
                dispatcher_actor dispatcher, resource_manager_actor rm) {
  report_crashes(self);
  init_state(self, std::move(graph), std::move(opts), std::move(dispatcher),
             std::move(rm));
  auto& st = self->state;
  self->monitor(st.dispatcher);
  self->monitor(st.rm);
  self->set_down_handler([=](caf::down_msg& dm) { on_down(self, dm); });
  if (st.opts.heartbeat.interval.count() > 0)
    self->send(self, beat_atom_v);
  set_state(self, job_state::running);
  self->send(self, start_atom_v);
  if (st.adaptive)
    self->send(self, overview_atom_v);
  return {
    // -- slots and subtasks ---------------------------------------------------
    [=](offer_atom, const resource_id& from,
        const std::vector<slot_offer>& offers) {
      return on_offer(self, from, offers);
    },
    [=](update_atom, execution_attempt_id attempt, execution_state s,
        const io_metrics& m, const std::string& error) {
      on_update(self, attempt, s, m, error);
    },
    [=](crashed_atom, execution_attempt_id attempt, const std::string& cause) {
      auto flat = self->state.scheduler->graph().find(attempt);
      if (flat < 0)
        return false; // an attempt before a restart
      auto metrics = self->state.scheduler->graph().executions()[static_cast<size_t>(flat)]
                       .metrics;
      on_update(self, attempt, execution_state::failed, metrics, cause);
      return true;
    },
    [=](exit_status_atom, execution_attempt_id attempt, int32_t status) {
      if (self->state.scheduler->graph().find(attempt) >= 0)
        self->state.driver_exit_status = status;
    },
    [=](metrics_atom, execution_attempt_id attempt, const io_metrics& m) {
      auto flat = self->state.scheduler->graph().find(attempt);
      if (flat >= 0)
        self->state.scheduler->graph().set_metrics(flat, m);
    },
    [=](collect_atom, execution_attempt_id attempt, collected_table& t) {
      auto& st = self->state;
      auto flat = st.scheduler->graph().find(attempt);
      if (flat < 0)
        return; // from an attempt before a restart
      if (st.opts.print_driver_output
          && st.scheduler->graph().graph().priority == job_priority::driver)
        print_lines(t.rows);
      if (!st.collected.add(flat, std::move(t)))
        fail_job(self, fmt::format("collect sink: result exceeds {} bytes "
                                   "(collect.max-bytes)",
                                   st.collected.max_bytes()));
    },
    [=](blob_atom a, std::string& hash) -> caf::result<std::string> {
      if (auto err = check_blob_request(self, hash))
        return err;
      if (!self->state.opts.store)
        return make_error(errc::invalid_job, "this cluster has no blob store");
      return self->delegate(self->state.opts.store, a, std::move(hash));
    },
    [=](checkpoint_atom, execution_attempt_id attempt, int64_t id,
        int64_t alignment_ms, operator_states& states) {
      on_checkpoint_ack(self, attempt, id, alignment_ms, states);
    },
    // -- clients (through the Dispatcher) -------------------------------------
    [=](status_atom, bool detailed) { return make_status(self, detailed); },
    [=](collect_atom, int64_t offset) {
      auto& st = self->state;
      return st.collected.from(offset, st.opts.collect_batch_bytes);
    },
    [=](take_checkpoint_atom, bool full) {
      auto rp = self->make_response_promise<int64_t>();
      request_checkpoint(self, checkpoint_request::checkpoint(rp, full));
      return rp;
    },
    [=](savepoint_atom, std::string& dir,
        savepoint_mode mode) -> caf::result<std::string> {
      // No directory given: the job's execution.checkpointing.savepoint-dir
      // (its own, else the cluster's), as Flink's.
      if (dir.empty())
        dir = self->state.settings.savepoint_dir;
      if (dir.empty())
        return make_error(errc::invalid_config,
                          "no savepoint directory: give one, or set "
                          "execution.checkpointing.savepoint-dir for the job "
                          "or the jobmanager");
      auto rp = self->make_response_promise<std::string>();
      request_checkpoint(self,
                         checkpoint_request::savepoint(rp, std::move(dir), mode));
      return rp;
    },
    [=](rescale_atom, int32_t n) {
      auto rp = self->make_response_promise<int32_t>();
      request_rescale(self, n, rp);
      return rp;
    },
    [=](cancel_atom) { return on_cancel(self); },
    // -- ResourceManager --------------------------------------------------------
    [=](free_atom, const std::vector<allocation_id>& allocs) {
      on_allocations_lost(self, allocs);
    },
    [=](unmet_atom, std::string& why) {
      self->state.scheduler->slots_unmet(std::move(why));
      report_status(self);
    },
    [=](heartbeat_atom) { return self->state.scheduler->graph().graph().id; },
    // -- self -------------------------------------------------------------------
    [=](start_atom) {
      if (!self->state.settings_problem.empty())
        fail_job(self, self->state.settings_problem);
      else if (self->state.adaptive)
        size_round_then(self, job_state::running,
                        [self] { load_checkpoint_then_schedule(self); });
      else
        load_checkpoint_then_schedule(self);
    },
    [=](overview_atom) { on_adaptive_poll(self); },
    [=](reconcile_atom) { on_reconcile_poll(self); },
    [=](rescale_atom, int64_t id) {
      if (self->state.rescale.waits_for(id))
        rescale_failed(self, fmt::format("checkpoint {} did not complete "
                                         "within "
                                         "execution.checkpointing.timeout",
                                         id));
    },
    [=](trigger_atom, uint64_t epoch) { trigger_checkpoint(self, epoch); },
    [=](exited_atom, execution_attempt_id attempt, const std::string& cause) {
      // Still without its own report: it ended without one.
      auto flat = self->state.scheduler->graph().find(attempt);
      if (flat >= 0)
        on_update(self, attempt, execution_state::failed,
                  self->state.scheduler->graph()
                    .executions()[static_cast<size_t>(flat)]
                    .metrics,
                  cause);
    },
    [=](tick_atom, uint64_t epoch) { on_slot_request_timeout(self, epoch); },
    [=](restart_atom, uint64_t epoch) {
      // Once: maybe_finalize can send it twice for one round, and a round
      // being sized (adaptive scheduler) is still RESTARTING.
      if (epoch == self->state.job->epoch()
          && self->state.job->state() == job_state::restarting
          && !self->state.sizing)
        restart(self);
    },
    [=](beat_atom) { send_heartbeats(self); },
  };
}

} // namespace

} // namespace job_master_detail

job_master_actor spawn_job_master(caf::actor_system& sys, job_graph graph,
                                  job_master_options opts,
                                  dispatcher_actor dispatcher,
                                  resource_manager_actor rm) {
  return sys.spawn(job_master_detail::job_master_impl, std::move(graph),
                   std::move(opts), std::move(dispatcher), std::move(rm));
}

} // namespace weir
