// The JobMaster's scheduling and failover (docs/architecture.md § Slot
// protocol): slot requests and offers, deployment, start, cancellation,
// restarts and the job's end. The state diagram is atop job_master.cpp.
#include <fmt/format.h>

#include "actors/common/heartbeat_sender.hpp"
#include "actors/job_master/job_master_state.hpp"
#include "messages/errors.hpp"

namespace weir::job_master_detail {

namespace {

/// Tells every TaskExecutor holding a slot of this round to free the job's
/// slots, and the ResourceManager to drop the job's pending requests.
void free_job_everywhere(self_ptr self) {
  auto& st = self->state;
  auto job = st.graph->graph().id;
  for (auto& addr : st.slots->executors())
    if (auto i = st.executors.find(addr); i != st.executors.end())
      self->send(i->second, free_atom_v, job);
  self->send(st.rm, disconnect_atom_v, job, st.leader);
}

/// Ends the job: frees its slots everywhere and reports to the Dispatcher.
void finalize(self_ptr self) {
  auto& st = self->state;
  if (!st.job->finalize())
    return;
  if (auto to = st.job->end_state(st.graph->all_finished()))
    set_state(self, *to);
  st.requests.abort_all("the job ended");
  if (st.stop_reply) {
    auto& [req, path] = *st.stop_reply;
    if (st.job->state() == job_state::finished)
      req.complete(path);
    else
      req.refuse(make_error(errc::not_running,
                            fmt::format("the job ended {} while stopping "
                                        "(savepoint {} was written)",
                                        to_string(st.job->state()), path)));
  }
  job_result result;
  result.id = st.graph->graph().id;
  result.name = st.graph->graph().name;
  result.state = st.job->state();
  result.error = st.job->failure();
  result.start_time_ms = st.start_time_ms;
  result.end_time_ms = now_ms();
  result.metrics = job_metrics(self);
  result.collected = st.collected.take_all();
  if (result.state == job_state::failed)
    result.exit_status = st.driver_exit_status;
  free_job_everywhere(self);
  // Its checkpoints and failures, which the result does not keep: the
  // Dispatcher shows them for the ended job (until it restarts).
  st.checkpoint_stats.fail_pending("the job ended", now_ms());
  self->send(st.dispatcher, update_atom_v, make_status(self, true));
  self->send(st.dispatcher, done_atom_v, std::move(result));
  self->quit();
}

void start_all(self_ptr self) {
  auto& st = self->state;
  auto& g = *st.graph;
#ifdef WEIR_FAULT_INJECTION
  // Test hook: the first N JobMasters of a job crash once it is deployed.
  if (st.opts.incarnation < st.settings.crashes_to_inject)
    throw std::runtime_error(fmt::format(
      "injected JobMaster crash {} of {} (weir.fault.jobmaster-crashes)",
      st.opts.incarnation + 1, st.settings.crashes_to_inject));
#endif
  // Consumers first (executions are in topological order): a consumer is
  // running before the first batch of a local producer can reach it.
  for (size_t i = g.size(); i-- > 0;) {
    subtask_wiring w;
    for (auto& list : g.consumers(static_cast<int32_t>(i))) {
      std::vector<subtask_actor> hs;
      hs.reserve(list.size());
      for (auto c : list)
        hs.push_back(st.handles[static_cast<size_t>(c)]);
      w.consumers.push_back(std::move(hs));
    }
    self->send(st.handles[i], start_atom_v, std::move(w));
  }
  if (st.checkpoints->options().interval.count() > 0)
    self->delayed_send(self, st.checkpoints->options().interval,
                       trigger_atom_v, st.job->epoch());
}

/// The deployments of the subtasks in the shared slots just accepted.
std::vector<task_deployment>
deployments(self_ptr self,
            const std::vector<std::pair<int32_t, allocation_id>>& slots,
            std::vector<int32_t>& flats) {
  auto& st = self->state;
  auto& g = *st.graph;
  std::vector<task_deployment> batch;
  auto* cp = st.restore_state ? st.checkpoints->latest() : nullptr;
  for (auto& [slot, alloc] : slots) {
    for (auto flat : g.executions_in_slot(slot)) {
      g.transition(flat, execution_state::scheduled);
      g.transition(flat, execution_state::deploying);
      batch.push_back(g.deployment(flat, alloc));
      batch.back().backend = st.settings.backend;
      batch.back().code = g.graph().code;
      if (cp != nullptr)
        if (auto i = cp->states.find(flat); i != cp->states.end())
          batch.back().restore = i->second;
      flats.push_back(flat);
    }
  }
  return batch;
}

/// Deploys the subtasks of the shared slots just accepted from `te`.
void deploy(self_ptr self, task_executor_actor te,
            const std::vector<std::pair<int32_t, allocation_id>>& slots) {
  auto& st = self->state;
  std::vector<int32_t> flats;
  auto batch = deployments(self, slots, flats);
  auto epoch = st.job->epoch();
  self
    ->request(te, deploy_timeout, submit_atom_v, st.leader,
              job_master_actor{self}, std::move(batch))
    .then(
      [=](std::vector<subtask_actor>& spawned) {
        auto& st = self->state;
        if (epoch != st.job->epoch())
          return; // a restart freed these slots; the TaskExecutor stops them
        for (size_t i = 0; i < spawned.size() && i < flats.size(); ++i) {
          auto flat = static_cast<size_t>(flats[i]);
          st.handles[flat] = spawned[i];
          st.flat_by_addr[spawned[i].address()] = flats[i];
          self->monitor(spawned[i]);
          ++st.deployed;
        }
        if (st.job->state() != job_state::running) {
          cancel_all(self);
          return;
        }
        if (st.deployed == st.graph->size())
          start_all(self);
      },
      [=](caf::error& err) {
        if (epoch != self->state.job->epoch())
          return;
        // Too few network buffers stay too few: no restart.
        if (err == make_error(errc::insufficient_network_buffers))
          fail_job(self, describe(err));
        else
          on_task_failure(self, "deployment failed: " + describe(err));
      });
}

/// Sends slot requests to the ResourceManager; a refusal fails the job.
void send_slot_requests(self_ptr self, std::vector<slot_request> requests) {
  auto& st = self->state;
  self
    ->request(st.rm, deploy_timeout, request_atom_v, st.leader,
              st.graph->graph().id, job_master_actor{self}, std::move(requests))
    .then([](int32_t) {},
          [=](caf::error& err) {
            fail_job(self, "slot request refused: " + describe(err));
          });
}

} // namespace

void log_transition(self_ptr self, job_state from) {
  auto& st = self->state;
  if (st.job->state() == from)
    return;
  log_job(self, "switched from {} to {}", to_string(from),
          to_string(st.job->state()));
  report_status(self);
}

namespace {

/// The job's state and slot wait, without counters (cheap: no pass over
/// the subtasks).
job_status summary(self_ptr self) {
  auto& st = self->state;
  auto& g = *st.graph;
  job_status s;
  s.id = g.graph().id;
  s.name = g.graph().name;
  s.state = st.job->state();
  s.start_time_ms = st.start_time_ms;
  s.error = st.job->failure();
  s.slot_profile = st.settings.slot_profile;
  s.slots_needed = g.slots_needed();
  if (st.job->state() == job_state::running && st.slots->pending() > 0) {
    s.slots_missing = static_cast<int32_t>(st.slots->pending());
    s.waiting_since_ms = st.slots_requested_ms;
    s.waiting_for = st.slots_unmet;
  }
  return s;
}

} // namespace

void report_status(self_ptr self) {
  self->send(self->state.dispatcher, update_atom_v, summary(self));
}

void set_state(self_ptr self, job_state to) {
  auto from = self->state.job->state();
  self->state.job->set_state(to);
  log_transition(self, from);
}

void maybe_finalize(self_ptr self) {
  auto& st = self->state;
  if (!st.graph->all_terminal())
    return;
  if (st.job->state() == job_state::restarting) {
    self->delayed_send(self, st.job->restart_delay(), restart_atom_v,
                       st.job->epoch());
    return;
  }
  finalize(self);
}

/// Stops every subtask that still runs; those never deployed are canceled
/// at once.
void cancel_all(self_ptr self) {
  auto& st = self->state;
  auto& g = *st.graph;
  for (size_t i = 0; i < g.size(); ++i) {
    auto flat = static_cast<int32_t>(i);
    auto s = g.executions()[i].state;
    if (is_terminal(s) || s == execution_state::canceling)
      continue;
    if (st.handles[i]) {
      g.transition(flat, execution_state::canceling);
      self->send(st.handles[i], cancel_atom_v);
    } else {
      g.transition(flat, execution_state::canceled);
    }
  }
  maybe_finalize(self);
}

namespace {

/// Failures kept for the REST API's exception history.
constexpr size_t failures_kept = 16;

void note_failure(self_ptr self, const std::string& cause,
                  const failure_site& where, int32_t restart = 0,
                  std::chrono::milliseconds delay = {}) {
  auto& failures = self->state.failures;
  failures.push_back(failure_entry{cause, now_ms(), where.task, where.location,
                                   restart, delay.count()});
  if (failures.size() > failures_kept)
    failures.erase(failures.begin());
}

/// Moves the job to FAILED (if it may) and stops its subtasks.
void end_failed(self_ptr self, std::string cause) {
  auto& st = self->state;
  auto from = st.job->state();
  if (!st.job->fail(std::move(cause)))
    return;
  log_transition(self, from);
  cancel_all(self);
}

} // namespace

void fail_job(self_ptr self, std::string cause) {
  if (!is_globally_terminal(self->state.job->state())
      && self->state.job->state() != job_state::failing)
    note_failure(self, cause, {});
  end_failed(self, std::move(cause));
}

void on_task_failure(self_ptr self, std::string cause,
                     const failure_site& where) {
  auto& st = self->state;
  auto d = st.job->on_failure(self->clock().now(), std::move(cause));
  switch (d.what) {
    case failure_decision::action::ignore:
      return;
    case failure_decision::action::fail:
      note_failure(self, d.cause, where);
      end_failed(self, std::move(d.cause));
      return;
    case failure_decision::action::restart:
      note_failure(self, d.cause, where,
                   static_cast<int32_t>(st.job->epoch()) + 1, d.delay);
      log_job(self, "restarts in {} ms after: {}", d.delay.count(), d.cause);
      set_state(self, job_state::restarting);
      cancel_all(self);
      return;
  }
}

std::vector<allocation_id> on_offer(self_ptr self, const resource_id& from,
                                    const std::vector<slot_offer>& offers) {
  auto& st = self->state;
  auto te = caf::actor_cast<task_executor_actor>(self->current_sender());
  if (st.job->state() != job_state::running || !te)
    return {};
  auto accepted = st.slots->accept(te.address(), from.value, offers);
  if (st.executors.emplace(te.address(), te).second) {
    self->monitor(te);
    if (st.opts.heartbeat.interval.count() > 0)
      st.hb.watch(te.address(), self->clock().now());
  }
  if (!accepted.slots.empty()) {
    report_status(self);
    deploy(self, te, accepted.slots);
  }
  return std::move(accepted.allocations);
}

failure_site site_of(self_ptr self, int32_t flat) {
  auto& st = self->state;
  auto& x = st.graph->executions()[static_cast<size_t>(flat)];
  auto& t = st.graph->tasks()[static_cast<size_t>(x.task)];
  return failure_site{fmt::format("{} ({}/{})", t.name, x.subtask + 1,
                                  t.parallelism),
                      st.slots->executor_name(x.subtask)};
}

void on_update(self_ptr self, execution_attempt_id attempt, execution_state s,
               const io_metrics& m, const std::string& error) {
  auto& st = self->state;
  auto& g = *st.graph;
  auto flat = g.find(attempt);
  if (flat < 0)
    return;
  g.set_metrics(flat, m);
  auto current = g.executions()[static_cast<size_t>(flat)].state;
  if (current == execution_state::canceling && is_terminal(s)
      && s != execution_state::failed)
    s = execution_state::canceled; // ended on its own while being canceled
  if (!g.transition(flat, s))
    return;
  // A driver is the user's main(): one that returned a failure or threw
  // ends the application, as in Flink's application mode (a lost worker
  // still restarts it).
  if (s == execution_state::failed
      && (st.driver_exit_status != 0
          || g.graph().priority == job_priority::driver))
    fail_job(self, error);
  else if (s == execution_state::failed)
    on_task_failure(self, error, site_of(self, flat));
  else if (s == execution_state::canceled
           && st.job->state() == job_state::running)
    on_task_failure(self, "a subtask was canceled outside the JobMaster (its "
                          "TaskExecutor is shutting down)");
  maybe_finalize(self);
}

void request_slots(self_ptr self) {
  auto& st = self->state;
  send_slot_requests(self, st.slots->request_all(st.settings.slot_profile));
  st.slots_requested_ms = now_ms();
  report_status(self);
  self->delayed_send(self, st.settings.slot_request_timeout, tick_atom_v,
                     st.job->epoch());
}

void on_executor_lost(self_ptr self, const caf::actor_addr& lost,
                      const std::string& reason) {
  auto& st = self->state;
  auto gone = st.slots->lose_executor(lost);
  st.executors.erase(lost);
  st.hb.unwatch(lost);
  if (gone.slots.empty())
    return; // it held nothing of the current round (say, before a restart)
  auto& g = *st.graph;
  for (auto slot : gone.slots)
    for (auto flat : g.executions_in_slot(slot))
      if (!is_terminal(g.executions()[static_cast<size_t>(flat)].state))
        g.transition(flat, execution_state::failed);
  on_task_failure(self,
                  fmt::format("TaskExecutor {} lost: {}", gone.name, reason),
                  failure_site{"", gone.name});
  maybe_finalize(self);
}

/// Sends a heartbeat request to every TaskExecutor holding the job's slots
/// (ahead of their other messages); one silent for heartbeat.timeout, or
/// whose requests fail heartbeat.rpc-failure-threshold times in a row, is
/// lost.
void send_heartbeats(self_ptr self) {
  auto& st = self->state;
  auto lost = [=](const caf::actor_addr& peer, const std::string& why) {
    on_executor_lost(self, peer, why);
  };
  for (auto& [addr, te] : st.executors)
    request_heartbeat(self, st.hb, te, lost);
  end_heartbeat_round(self, st.hb, lost);
}

/// Allocations died with their TaskExecutor before it offered them: ask for
/// replacements (accepted ones are handled by the TaskExecutor's down
/// message).
void on_allocations_lost(self_ptr self, const std::vector<allocation_id>& lost) {
  auto& st = self->state;
  auto replacements = st.slots->replace(lost, st.settings.slot_profile);
  if (replacements.empty() || st.job->state() != job_state::running)
    return;
  send_slot_requests(self, std::move(replacements));
}

/// Every subtask has stopped and the restart delay passed: give the slots
/// back and schedule the job again with new attempts.
void restart(self_ptr self) {
  auto& st = self->state;
  // Also drops this job's pending requests of the last round (say, a
  // replacement for a slot lost before it was offered) before asking again.
  free_job_everywhere(self);
  st.earlier_attempts = job_metrics(self);
  st.graph->restart();
  st.handles.assign(st.graph->size(), subtask_actor{});
  st.flat_by_addr.clear();
  st.deployed = 0;
  // Resume from the newest checkpoint when the sinks allow it: sources
  // rewind to its positions, operators get its state, collected records
  // are cut back to what it covered. Else start over from the sources.
  st.checkpoints->abort_pending();
  st.checkpoint_stats.fail_pending("the job restarted", now_ms());
  st.collected.abort_pending();
  // A stop in progress ends with the attempt it halted (the new attempt's
  // sources produce).
  st.stop_checkpoint.reset();
  if (st.stop_reply) {
    st.stop_reply->first.refuse(make_error(
      errc::not_running, fmt::format("the job failed while stopping and "
                                     "restarts (savepoint {} was written)",
                                     st.stop_reply->second)));
    st.stop_reply.reset();
  }
  st.requests.abort_all("the job restarts");
  auto* latest = st.settings.resumable ? st.checkpoints->latest() : nullptr;
  st.restore_state = latest != nullptr;
  if (latest != nullptr) {
    st.collected.cut_back();
    log_job(self, "resumes from checkpoint {}", latest->id);
  } else {
    st.collected.clear();
  }
  st.slots->reset();
  auto from = st.job->state();
  st.job->restart();
  log_transition(self, from);
  request_slots(self);
}

job_status make_status(self_ptr self, bool detailed) {
  auto& st = self->state;
  auto& g = *st.graph;
  auto s = summary(self);
  s.subtasks_total = static_cast<int32_t>(g.size());
  s.subtasks_running = g.count(execution_state::running);
  s.subtasks_finished = g.count(execution_state::finished);
  s.metrics = job_metrics(self);
  s.attempt_metrics = g.total_metrics();
  s.restarts = static_cast<int32_t>(st.job->epoch());
  // Few and small: every view has them, so a client shows each restart's
  // cause as it happens.
  s.exceptions = st.failures;
  if (detailed) {
    s.checkpoints = st.checkpoint_stats.stats(now_ms());
    for (auto& x : g.executions()) {
      auto& t = g.tasks()[static_cast<size_t>(x.task)];
      // Slot sharing: subtask k of every task runs in shared slot k.
      s.subtasks.push_back(subtask_status{t.name, x.subtask, t.parallelism,
                                          x.state,
                                          st.slots->executor_name(x.subtask),
                                          x.attempt_number, x.start_time_ms,
                                          x.end_time_ms, x.metrics});
    }
  }
  return s;
}

io_metrics job_metrics(self_ptr self) {
  auto& st = self->state;
  auto current = st.graph->total_metrics();
  // Skipped rows count in the attempt that skipped them: a restart skips
  // them again, so they are not added up across attempts.
  // Counters, like records, add up over attempts.
  auto vertices = st.earlier_attempts.vertices;
  add_vertex_metrics(vertices, current.vertices);
  return io_metrics{st.earlier_attempts.records_in + current.records_in,
                    st.earlier_attempts.records_out + current.records_out,
                    current.records_skipped, current.skipped_note,
                    std::move(vertices)};
}

} // namespace weir::job_master_detail
