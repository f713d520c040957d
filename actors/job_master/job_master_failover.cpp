// The JobMaster's failover and the job's end: failures and the restart
// strategy, lost TaskExecutors, cancellation, the next round, the result.
#include <utility>

#include <fmt/format.h>

#include "actors/job_master/job_master_state.hpp"
#include "messages/errors.hpp"

namespace weir::job_master_detail {

namespace {

/// Tells every TaskExecutor holding a slot of this round to free the job's
/// slots, and the ResourceManager to drop the job's pending requests.
void free_job_everywhere(self_ptr self) {
  if (!still_leads(self, "free its slots"))
    return;
  auto& st = self->state;
  auto job = st.scheduler->graph().graph().id;
  for (auto& addr : st.scheduler->slots().executors())
    if (auto i = st.executors.find(addr); i != st.executors.end())
      self->send(i->second, free_atom_v, job);
  self->send(st.rm, disconnect_atom_v, job, st.leader);
}

/// Ends the job: frees its slots everywhere and reports to the Dispatcher.
void finalize(self_ptr self) {
  auto& st = self->state;
  if (!st.job->finalize())
    return;
  if (auto to = st.job->end_state(st.scheduler->graph().all_finished()))
    set_state(self, *to);
  st.requests.abort_all("the job ended");
  rescale_failed(self, fmt::format("the job ended {}", to_string(st.job->state())));
  if (auto reply = st.stop.finished()) {
    auto& [req, path] = *reply;
    if (st.job->state() == job_state::finished)
      req.complete(path);
    else
      req.refuse(make_error(errc::not_running,
                            fmt::format("the job ended {} while stopping "
                                        "(savepoint {} was written)",
                                        to_string(st.job->state()), path)));
  }
  job_result result;
  result.id = st.scheduler->graph().graph().id;
  result.name = st.scheduler->graph().graph().name;
  result.state = st.job->state();
  result.error = st.job->failure();
  result.start_time_ms = st.start_time_ms;
  result.end_time_ms = now_ms();
  result.metrics = job_metrics(self);
  result.collected = one_table_per_sink(st.collected.take_all(),
                                        st.scheduler->graph().graph());
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

void maybe_finalize(self_ptr self) {
  auto& st = self->state;
  if (!st.scheduler->graph().all_terminal())
    return;
  if (st.job->state() == job_state::restarting) {
    // A rescale's round, or one sized again, follows at once: nothing
    // failed.
    auto delay = st.rescale.next_round() || std::exchange(st.resize_now, false)
                   ? std::chrono::milliseconds{0}
                   : st.job->restart_delay();
    self->delayed_send(self, delay, restart_atom_v, st.job->epoch());
    return;
  }
  finalize(self);
}

/// Stops every subtask that still runs; those never deployed are canceled
/// at once.
void cancel_all(self_ptr self) {
  auto& st = self->state;
  auto& g = st.scheduler->graph();
  for (size_t i = 0; i < g.size(); ++i) {
    auto flat = static_cast<int32_t>(i);
    auto s = g.executions()[i].state;
    if (is_terminal(s) || s == execution_state::canceling)
      continue;
    if (st.scheduler->subtasks()[i]) {
      g.transition(flat, execution_state::canceling);
      self->send(st.scheduler->subtasks()[i], cancel_atom_v);
    } else {
      g.transition(flat, execution_state::canceled);
    }
  }
  maybe_finalize(self);
}

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
      // The failed round's late acknowledgements complete nothing.
      st.checkpoints->abort_pending();
      st.checkpoint_stats.fail_pending("the job restarts", now_ms());
      set_state(self, job_state::restarting);
      cancel_all(self);
      return;
  }
}

void on_executor_lost(self_ptr self, const caf::actor_addr& lost,
                      const std::string& reason) {
  auto& st = self->state;
  auto gone = st.scheduler->slots().lose_executor(lost);
  st.executors.erase(lost);
  st.hb.unwatch(lost);
  if (auto i = st.executor_ids.find(lost); i != st.executor_ids.end()) {
    st.lost_since_sizing.push_back(i->second);
    st.executor_ids.erase(i);
  }
  if (gone.slots.empty())
    return; // it held nothing of the current round (say, before a restart)
  auto& g = st.scheduler->graph();
  for (auto slot : gone.slots)
    for (auto flat : g.executions_in_slot(slot))
      if (!is_terminal(g.executions()[static_cast<size_t>(flat)].state))
        g.transition(flat, execution_state::failed);
  on_task_failure(self,
                  fmt::format("TaskExecutor {} lost: {}", gone.name, reason),
                  failure_site{"", gone.name});
  maybe_finalize(self);
}

/// Every subtask has stopped and the restart delay passed: give the slots
/// back and schedule the job again with new attempts.
void restart(self_ptr self) {
  auto& st = self->state;
  // Also drops this job's pending requests of the last round (say, a
  // replacement for a slot lost before it was offered) before asking again.
  free_job_everywhere(self);
  st.earlier_attempts = job_metrics(self);
  // Resume from the newest checkpoint when the sinks allow it: sources
  // rewind to its positions, operators get its state, collected rows are
  // cut back to what it covered. Else start over from the sources.
  st.checkpoints->abort_pending();
  st.checkpoint_stats.fail_pending("the job restarted", now_ms());
  st.collected.abort_pending();
  // A stop in progress ends with the attempt it halted (the new attempt's
  // sources produce).
  if (auto reply = st.stop.restarted())
    reply->first.refuse(make_error(
      errc::not_running, fmt::format("the job failed while stopping and "
                                     "restarts (savepoint {} was written)",
                                     reply->second)));
  st.requests.abort_all("the job restarts");
  // A failure before the rescaled round ran goes back to the old
  // parallelism; one before the rescale's checkpoint ends the rescale.
  if (st.rescale.busy() && !st.rescale.next_round().has_value()) {
    auto why = st.failures.empty() ? std::string{"the job failed"}
                                   : st.failures.back().exception;
    rescale_failed(self, "the job restarts after: " + why);
  }
  // The adaptive scheduler sizes the round from the slots the job could
  // hold now (the job stays RESTARTING meanwhile: no offer is taken). Not
  // a job whose client collects rows by subtask position: it keeps the
  // parallelism of its first round.
  if (st.adaptive && !st.rescale.next_round()
      && !(st.settings.resumable && !st.settings.resumable_from_storage)) {
    size_round_then(self, job_state::restarting,
                    [self] { start_round(self); });
    return;
  }
  start_round(self);
}

void start_round(self_ptr self) {
  auto& st = self->state;
  rebuild_for_rescale(self);
  auto* latest = st.settings.resumable ? st.checkpoints->latest() : nullptr;
  st.scheduler->new_round(latest != nullptr);
  if (latest != nullptr) {
    st.collected.cut_back();
    log_job(self, "resumes from checkpoint {}", latest->id);
  } else {
    st.collected.clear();
  }
  auto from = st.job->state();
  st.job->restart();
  log_transition(self, from);
  request_slots(self);
}

} // namespace weir::job_master_detail
