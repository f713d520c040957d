// The job's state as the JobMaster reports it: transitions, the status the
// Dispatcher shows (`list`, `status`), the job's counters.
#include <fmt/format.h>

#include "actors/job_master/job_master_state.hpp"
#include "messages/errors.hpp"

namespace weir::job_master_detail {

namespace {

/// The job's state and slot wait, without counters (cheap: no pass over
/// the subtasks).
job_status summary(self_ptr self) {
  auto& st = self->state;
  auto& g = st.scheduler->graph();
  job_status s;
  s.id = g.graph().id;
  s.name = g.graph().name;
  s.state = st.job->state();
  s.start_time_ms = st.start_time_ms;
  s.error = st.job->failure();
  s.slot_profile = st.settings.slot_profile;
  s.slots_needed = g.slots_needed();
  if (st.job->state() == job_state::running && st.scheduler->slots().pending() > 0) {
    s.slots_missing = static_cast<int32_t>(st.scheduler->slots().pending());
    s.waiting_since_ms = st.scheduler->slots_requested_ms();
    s.waiting_for = st.scheduler->slots_unmet();
  }
  return s;
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

void report_status(self_ptr self) {
  self->send(self->state.dispatcher, update_atom_v, summary(self));
}

bool still_leads(self_ptr self, const char* what) {
  auto& leading = self->state.opts.leading;
  if (!leading || leading())
    return true;
  log_job(self, "does not {}: this jobmanager lost the leadership", what);
  return false;
}

void set_state(self_ptr self, job_state to) {
  auto from = self->state.job->state();
  self->state.job->set_state(to);
  log_transition(self, from);
}

job_status make_status(self_ptr self, bool detailed) {
  auto& st = self->state;
  auto& g = st.scheduler->graph();
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
                                          st.scheduler->slots().executor_name(x.subtask),
                                          x.attempt_number, x.start_time_ms,
                                          x.end_time_ms, x.metrics,
                                          t.max_parallelism});
    }
  }
  return s;
}

io_metrics job_metrics(self_ptr self) {
  auto& st = self->state;
  auto current = st.scheduler->graph().total_metrics();
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
