// The JobMaster's checkpoints and savepoints: periodic triggers, the
// acknowledgements that complete a checkpoint, storing it, answering
// clients' checkpoint and savepoint requests, and finding the state a new
// JobMaster of the job starts from.
#include <memory>

#include <fmt/format.h>

#include "actors/job_master/job_master_state.hpp"
#include "actors/job_master/savepoint_mapping.hpp"
#include "dataplane/checkpoint_kind.hpp"
#include "messages/errors.hpp"
#include "storage/state/keyed_backend.hpp"
#include "storage/state_handle.hpp"

namespace weir::job_master_detail {

namespace {

/// Sends `xs` to every source subtask.
template <class... Ts>
void send_to_sources(self_ptr self, const Ts&... xs) {
  auto& st = self->state;
  auto& g = st.scheduler->graph();
  for (size_t i = 0; i < g.size(); ++i)
    if (g.tasks()[static_cast<size_t>(g.executions()[i].task)].inputs.empty()
        && st.scheduler->subtasks()[i])
      self->send(st.scheduler->subtasks()[i], xs...);
}

/// Tells every source subtask to take checkpoint `id` (they send the
/// barriers downstream); for a stop, to halt after it.
void send_barrier_triggers(self_ptr self, int64_t id,
                           state::snapshot_kind kind, bool stop = false,
                           bool suspend = false) {
  checkpoint_barrier b{id, to_checkpoint_kind(kind), suspend};
  if (stop)
    send_to_sources(self, stop_atom_v, b);
  else
    send_to_sources(self, trigger_atom_v, b);
}

/// The stop's savepoint is written: the halted sources end their input, so
/// every subtask finishes (sinks publish their output) and the job
/// FINISHES; the client is answered then.
void finish_stop(self_ptr self, checkpoint_request req,
                 const std::string& written) {
  auto& st = self->state;
  if (st.job->state() != job_state::running) {
    st.stop.finished();
    req.refuse(make_error(errc::not_running,
                          fmt::format("the job is {}: not stopped (savepoint "
                                      "{} was written)",
                                      to_string(st.job->state()), written)));
    return;
  }
  log_job(self, "stops: its sources end at the savepoint");
  st.stop.written(std::move(req), written);
  send_to_sources(self, finish_atom_v);
}

/// Writes a completed checkpoint through the job store (a detached actor),
/// so that a later JobMaster of the job resumes from it; then `stored`.
/// A checkpoint that cannot be stored is not confirmed: its sinks commit
/// with the next one.
template <class F>
void store_checkpoint(self_ptr self, const completed_checkpoint& done,
                      F stored) {
  auto& st = self->state;
  auto id = done.id;
  self
    ->request(st.opts.store, deploy_timeout, checkpoint_atom_v,
              st.scheduler->graph().graph().id,
              checkpoint_snapshot{done.id, to_savepoint(st.scheduler->graph(), done)},
              st.checkpoints->options().retained)
    .then([stored](const std::string&) mutable { stored(); },
          [=](caf::error& err) {
            log_job(self, "could not store checkpoint {}: {}", id,
                    describe(err));
            self->state.checkpoint_stats.failed(
              id, "could not store it: " + describe(err), now_ms());
            if (self->state.rescale.waits_for(id))
              rescale_failed(self, fmt::format("could not store checkpoint "
                                               "{}: {}",
                                               id, describe(err)));
          });
}

/// Writes checkpoint `done` as a savepoint through the job store (a
/// detached actor); answers the client, or for a stop, stops the job and
/// answers once it has FINISHED.
void write_savepoint(self_ptr self, const completed_checkpoint& done,
                     checkpoint_request req) {
  auto& st = self->state;
  auto done_id = done.id;
  auto path = fmt::format("{}/savepoint-{}-{}", req.dir(),
                          st.scheduler->graph().graph().id.to_string().substr(0, 6),
                          done.id);
  self
    ->request(st.opts.store, deploy_timeout, savepoint_atom_v, path,
              to_savepoint(st.scheduler->graph(), done))
    .then(
      [=](const std::string& written) mutable {
        log_job(self, "wrote savepoint {}", written);
        self->state.checkpoint_stats.externalized(done_id, written);
        if (req.stop())
          finish_stop(self, std::move(req), written);
        else
          req.complete(written);
      },
      [=](caf::error& err) mutable {
        if (req.stop())
          stop_failed(self);
        auto why = "could not write the savepoint: " + describe(err);
        self->state.checkpoint_stats.write_failed(done_id, why, now_ms());
        req.refuse(make_error(errc::storage_failure, why));
      });
}

/// A job started with execution.savepoint.path: its first deployment gets
/// the savepoint's state (when no stored checkpoint of its own came first).
void load_savepoint_then_schedule(self_ptr self) {
  auto& st = self->state;
  if (!st.opts.store || !st.settings.savepoint_path) {
    schedule_first_round(self);
    return;
  }
  auto path = *st.settings.savepoint_path;
  auto ignore = st.settings.ignore_unclaimed_state;
  self->request(st.opts.store, deploy_timeout, savepoint_atom_v, path)
    .then(
      [=](savepoint_data& sp) {
        auto& st = self->state;
        completed_checkpoint cp;
        st.scheduler->graph().adopt_max_parallelism(sp.max_parallelism);
        if (auto err = from_savepoint(st.scheduler->graph(), sp, ignore, path, cp)) {
          fail_job(self, describe(err));
          return;
        }
        st.checkpoint_stats.restored(cp.id, now_ms(), path);
        // Mapped onto this graph: a later rebuild maps the savepoint again,
        // never the shares.
        st.rescale_base = std::make_shared<const savepoint_data>(std::move(sp));
        st.rescale_base_id = cp.id;
        st.checkpoints->restore(std::move(cp));
        st.scheduler->restore_state();
        log_job(self, "starts from savepoint {}", path);
        schedule_first_round(self);
      },
      [=](caf::error& err) {
        fail_job(self, "cannot restore from savepoint: " + describe(err));
      });
}

/// The stored checkpoint `loaded` as one to restore, or nothing (logged).
std::optional<completed_checkpoint> usable(self_ptr self,
                                           loaded_checkpoint& loaded) {
  for (auto& p : loaded.problems)
    log_job(self, "skipped a stored checkpoint: {}", p);
  if (loaded.cp.id <= 0)
    return std::nullopt;
  completed_checkpoint cp;
  cp.id = loaded.cp.id;
  self->state.scheduler->graph().adopt_max_parallelism(
    loaded.cp.state.max_parallelism);
  if (auto err = from_savepoint(self->state.scheduler->graph(), loaded.cp.state, false,
                                "checkpoint", cp)) {
    log_job(self, "cannot use its stored checkpoint {}: {}", loaded.cp.id,
            describe(err));
    return std::nullopt;
  }
  // Mapped onto this graph: a later rebuild maps the stored state again.
  self->state.rescale_base
    = std::make_shared<const savepoint_data>(loaded.cp.state);
  self->state.rescale_base_id = cp.id;
  return cp;
}

} // namespace

void trigger_checkpoint(self_ptr self, uint64_t epoch) {
  auto& st = self->state;
  if (epoch != st.job->epoch() || st.job->state() != job_state::running)
    return;
  if (st.scheduler->graph().count(execution_state::finished) > 0) {
    // Subtasks that finished take no more checkpoints: none can complete.
    st.checkpoints->abort_pending();
    st.checkpoint_stats.fail_pending("some subtasks finished", now_ms());
    rescale_failed(self, "some subtasks finished");
    return;
  }
  auto now = self->clock().now();
  for (auto id : st.checkpoints->expire(now)) {
    log_job(self, "checkpoint {} expired", id);
    st.checkpoint_stats.failed(id, "expired", now_ms());
    if (st.stop.waits_for(id))
      stop_failed(self);
    if (st.rescale.waits_for(id))
      rescale_failed(self, fmt::format("checkpoint {} expired", id));
    st.requests.refuse(id, make_error(errc::timeout,
                                      fmt::format("checkpoint {} expired", id)));
  }
  // None while a stop is under way: a plain barrier after the stop's would
  // end its suspension, and the job would drain (docs/event-time.md §
  // Stopping and resuming).
  auto id = st.stop.busy() ? std::nullopt : st.checkpoints->trigger(now);
  if (id) {
    st.checkpoint_stats.triggered(*id, false,
                                  static_cast<int32_t>(st.scheduler->graph().size()),
                                  now_ms());
    send_barrier_triggers(self, *id, state::snapshot_kind::checkpoint);
  }
  self->delayed_send(self, st.checkpoints->options().interval, trigger_atom_v,
                     epoch);
}

void on_checkpoint_ack(self_ptr self, execution_attempt_id attempt, int64_t id,
                       int64_t alignment_ms,
                       operator_states& states) {
  auto& st = self->state;
  auto flat = st.scheduler->graph().find(attempt);
  if (flat < 0)
    return;
  st.collected.acknowledged(id, flat);
  auto& g = st.scheduler->graph();
  auto& x = g.executions()[static_cast<size_t>(flat)];
  subtask_ack ack{g.tasks()[static_cast<size_t>(x.task)].name, x.subtask};
  for (auto& [vertex, bytes] : states)
    ack.state_size += storage::state_size(bytes);
  st.checkpoint_stats.acknowledged(id, alignment_ms, now_ms(), std::move(ack));
  auto done = st.checkpoints->acknowledge(id, flat, std::move(states),
                                          self->clock().now());
  if (!done)
    return;
  // As in Flink, a checkpoint is confirmed (sinks commit, the client sees
  // its collected records, "completed checkpoint N" is logged) only once
  // it is stored: a master killed right after must resume from it or a
  // later one, never from an older one.
  auto completed = std::make_shared<completed_checkpoint>(std::move(*done));
  auto epoch = st.job->epoch();
  auto confirm = [self, done = completed, epoch] {
    auto& st = self->state;
    // A failure since it completed: the restart resumes from the newest
    // confirmed checkpoint and cuts the collected rows back to it, so this
    // one must not become the newest now (weir-sim found rows lost so,
    // docs/simulation.md § What the seeds found).
    if (st.job->epoch() != epoch || st.job->state() != job_state::running) {
      log_job(self, "checkpoint {} completed as the job failed: not used",
              done->id);
      st.checkpoint_stats.failed(done->id, "the job failed before it was "
                                 "stored", now_ms());
      return;
    }
    st.checkpoints->confirm(*done);
    st.checkpoint_stats.completed(done->id, done->bytes, now_ms());
    st.collected.commit(done->id);
    for (auto& h : st.scheduler->subtasks().all())
      if (h)
        self->send(h, commit_atom_v, done->id);
    if (auto req = st.requests.take(done->id)) {
      if (req->is_savepoint())
        write_savepoint(self, *done, std::move(*req));
      else
        req->complete(done->id);
    }
    log_job(self, "completed checkpoint {} ({} bytes in {} ms)", done->id,
            done->bytes, done->duration.count());
    // Its own, or a later one that subsumed it.
    if (st.rescale.taken_by(done->id))
      rescale_checkpoint_taken(self, *done);
  };
  // Stored even when a later JobMaster would not resume from it (collected
  // output): the store keeps the state files of the retained checkpoints
  // and deletes the others.
  if (st.opts.store)
    store_checkpoint(self, *completed, std::move(confirm));
  else
    confirm();
}

void load_checkpoint_then_schedule(self_ptr self) {
  auto& st = self->state;
  if (!st.opts.store || !st.settings.resumable_from_storage) {
    load_savepoint_then_schedule(self);
    return;
  }
  self->request(st.opts.store, deploy_timeout, load_atom_v, st.scheduler->graph().graph().id)
    .then(
      [=](loaded_checkpoint& loaded) {
        auto cp = usable(self, loaded);
        if (!cp) {
          load_savepoint_then_schedule(self);
          return;
        }
        self->state.checkpoint_stats.restored(cp->id, now_ms());
        self->state.checkpoints->restore(std::move(*cp));
        self->state.scheduler->restore_state();
        log_job(self, "resumes from checkpoint {}", loaded.cp.id);
        schedule_first_round(self);
      },
      [=](caf::error& err) {
        log_job(self,
                "could not load its checkpoints ({}); it starts from its "
                "sources",
                describe(err));
        load_savepoint_then_schedule(self);
      });
}

void request_checkpoint(self_ptr self, checkpoint_request req) {
  auto& st = self->state;
  auto& g = st.scheduler->graph();
  if (st.rescale.busy()) {
    req.refuse(make_error(errc::not_running,
                          fmt::format("job {} is being rescaled",
                                      g.graph().id.to_string())));
    return;
  }
  if (st.job->state() != job_state::running || !st.scheduler->subtasks().complete()
      || st.stop.busy() || taking_over(self)) {
    req.refuse(make_error(errc::not_running,
                          fmt::format("job {} is not running",
                                      g.graph().id.to_string())));
    return;
  }
  if (g.count(execution_state::finished) > 0) {
    req.refuse(make_error(errc::not_running,
                          "some subtasks of the job have finished: no more "
                          "checkpoints"));
    return;
  }
  auto id = st.checkpoints->trigger(self->clock().now(), true);
  st.checkpoint_stats.triggered(*id, req.is_savepoint(),
                                static_cast<int32_t>(g.size()), now_ms(),
                                req.stop());
  if (req.stop())
    st.stop.begin(*id);
  send_barrier_triggers(self, *id, req.kind(), req.stop(), req.suspend());
  st.requests.add(*id, std::move(req));
}

int64_t trigger_checkpoint_now(self_ptr self) {
  auto& st = self->state;
  auto id = *st.checkpoints->trigger(self->clock().now(), true);
  st.checkpoint_stats.triggered(
    id, false, static_cast<int32_t>(st.scheduler->graph().size()), now_ms());
  send_barrier_triggers(self, id, state::snapshot_kind::checkpoint);
  return id;
}

void stop_failed(self_ptr self) {
  auto& st = self->state;
  if (!st.stop.failed())
    return;
  log_job(self, "is not stopped: its sources produce again");
  send_to_sources(self, resume_atom_v);
}

} // namespace weir::job_master_detail
