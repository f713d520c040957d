// The JobMaster's checkpoints and savepoints: periodic triggers, the
// acknowledgements that complete a checkpoint, storing it, answering
// clients' checkpoint and savepoint requests, and finding the state a new
// JobMaster of the job starts from.
#include <fmt/format.h>

#include "actors/common/event_log.hpp"
#include "actors/job_master/job_master_state.hpp"
#include "actors/job_master/savepoint_mapping.hpp"
#include "dataplane/checkpoint_kind.hpp"
#include "messages/errors.hpp"
#include "storage/state/keyed_backend.hpp"

namespace weir::job_master_detail {

void send_barrier_triggers(self_ptr self, int64_t id, state::snapshot_kind kind);
void store_checkpoint(self_ptr self, const completed_checkpoint& done);
void write_savepoint(self_ptr self, const completed_checkpoint& done,
                     checkpoint_request req);
void load_savepoint_then_schedule(self_ptr self);

/// Answers every waiting checkpoint or savepoint request with an error.
void fail_requests(self_ptr self, const std::string& why) {
  auto& st = self->state;
  for (auto& [id, r] : st.requests) {
    r.refuse(make_error(errc::invalid_job,
                        fmt::format("checkpoint {} was abandoned: {}", id, why)));
  }
  st.requests.clear();
}

/// Tells every source subtask to take checkpoint `id` (they send the
/// barriers downstream).
void send_barrier_triggers(self_ptr self, int64_t id,
                           state::snapshot_kind kind) {
  auto& st = self->state;
  auto& g = *st.graph;
  for (size_t i = 0; i < g.size(); ++i)
    if (g.tasks()[static_cast<size_t>(g.executions()[i].task)].inputs.empty()
        && st.handles[i])
      self->send(st.handles[i], trigger_atom_v,
                 checkpoint_barrier{id, to_checkpoint_kind(kind)});
}

/// Triggers a checkpoint at every source subtask (they send the barriers
/// downstream) and plans the next one.
void trigger_checkpoint(self_ptr self, uint64_t epoch) {
  auto& st = self->state;
  auto& g = *st.graph;
  if (epoch != st.epoch || st.state != job_state::running)
    return;
  if (g.count(execution_state::finished) > 0) {
    // Subtasks that finished take no more checkpoints: none can complete.
    st.checkpoints->abort_pending();
    return;
  }
  auto now = self->clock().now();
  for (auto id : st.checkpoints->expire(now)) {
    log_eventf("job {} ({}) checkpoint {} expired",
               g.graph().id.to_string(), g.graph().name, id);
    if (auto r = st.requests.find(id); r != st.requests.end()) {
      r->second.refuse(make_error(errc::timeout,
                                  fmt::format("checkpoint {} expired", id)));
      st.requests.erase(r);
    }
  }
  if (auto id = st.checkpoints->trigger(now))
    send_barrier_triggers(self, *id, state::snapshot_kind::checkpoint);
  self->delayed_send(self, st.checkpoints->options().interval, trigger_atom_v,
                     epoch);
}

void on_checkpoint_ack(self_ptr self, execution_attempt_id attempt, int64_t id,
                       operator_states& states) {
  auto& st = self->state;
  auto flat = st.graph->find(attempt);
  if (flat < 0)
    return;
  st.collected_at[id][flat] = st.collected[flat].size();
  auto done = st.checkpoints->acknowledge(id, flat, std::move(states),
                                          self->clock().now());
  if (!done)
    return;
  st.committed_collected = std::move(st.collected_at[id]);
  st.collected_at.erase(st.collected_at.begin(), st.collected_at.upper_bound(id));
  for (auto& h : st.handles)
    if (h)
      self->send(h, commit_atom_v, done->id);
  if (st.opts.store && st.resumable_from_storage)
    store_checkpoint(self, *done);
  if (auto r = st.requests.find(done->id); r != st.requests.end()) {
    auto req = std::move(r->second);
    st.requests.erase(r);
    if (req.is_savepoint)
      write_savepoint(self, *done, std::move(req));
    else
      req.checkpoint.deliver(done->id);
  }
  log_eventf("job {} ({}) completed checkpoint {} ({} bytes in {} ms)",
             st.graph->graph().id.to_string(), st.graph->graph().name,
             done->id, done->bytes, done->duration.count());
}

/// Writes a completed checkpoint through the job store (a detached actor),
/// so that a later JobMaster of the job resumes from it.
void store_checkpoint(self_ptr self, const completed_checkpoint& done) {
  auto& st = self->state;
  auto job = st.graph->graph().id;
  auto name = st.graph->graph().name;
  auto id = done.id;
  self
    ->request(st.opts.store, deploy_timeout, checkpoint_atom_v, job,
              checkpoint_snapshot{done.id, to_savepoint(*st.graph, done)},
              st.checkpoints->options().retained)
    .then([](const std::string&) {},
          [=](caf::error& err) {
            log_eventf("job {} ({}) could not store checkpoint {}: {}",
                       job.to_string(), name, id, describe(err));
          });
}

/// Before the first scheduling: the newest checkpoint an earlier JobMaster
/// of this job stored, if the job can resume from it.
void load_checkpoint_then_schedule(self_ptr self) {
  auto& st = self->state;
  if (!st.opts.store || !st.resumable_from_storage) {
    load_savepoint_then_schedule(self);
    return;
  }
  auto job = st.graph->graph().id;
  auto name = st.graph->graph().name;
  self->request(st.opts.store, deploy_timeout, load_atom_v, job)
    .then(
      [=](loaded_checkpoint& loaded) {
        for (auto& p : loaded.problems)
          log_eventf("job {} ({}) skipped a stored checkpoint: {}",
                     job.to_string(), name, p);
        completed_checkpoint cp;
        cp.id = loaded.cp.id;
        auto problem = loaded.cp.id > 0
                         ? from_savepoint(*self->state.graph, loaded.cp.state,
                                          false, "checkpoint", cp)
                         : std::string{};
        if (!problem.empty())
          log_eventf("job {} ({}) cannot use its stored checkpoint {}: {}",
                     job.to_string(), name, loaded.cp.id, problem);
        if (loaded.cp.id > 0 && problem.empty()) {
          self->state.checkpoints->restore(std::move(cp));
          self->state.restore_state = true;
          log_eventf("job {} ({}) resumes from checkpoint {}", job.to_string(),
                     name, loaded.cp.id);
          request_slots(self);
          return;
        }
        load_savepoint_then_schedule(self);
      },
      [=](caf::error& err) {
        log_eventf("job {} ({}) could not load its checkpoints ({}); it starts "
                   "from its sources",
                   job.to_string(), name, describe(err));
        load_savepoint_then_schedule(self);
      });
}

/// Writes checkpoint `done` as a savepoint through the job store (a
/// detached actor); answers the client, then stops the job if asked.
void write_savepoint(self_ptr self, const completed_checkpoint& done,
                     checkpoint_request req) {
  auto& st = self->state;
  auto job = st.graph->graph().id;
  auto path = fmt::format("{}/savepoint-{}-{}", req.dir,
                          job.to_string().substr(0, 6), done.id);
  self
    ->request(st.opts.store, deploy_timeout, savepoint_atom_v, path,
              to_savepoint(*st.graph, done))
    .then(
      [=](const std::string& written) mutable {
        auto& st = self->state;
        log_eventf("job {} ({}) wrote savepoint {}", job.to_string(),
                   st.graph->graph().name, written);
        req.savepoint.deliver(written);
        if (req.stop && st.state == job_state::running) {
          st.stopping = true;
          cancel_all(self);
        }
      },
      [=](caf::error& err) mutable {
        req.savepoint.deliver(make_error(
          errc::storage_failure, "could not write the savepoint: " + describe(err)));
      });
}

/// A client asked for a checkpoint (or savepoint) now.
namespace {

template <class Promise>
Promise request_checkpoint(self_ptr self, Promise rp, checkpoint_request req) {
  auto& st = self->state;
  auto& g = *st.graph;
  auto refuse = [&](std::string why) {
    rp.deliver(make_error(errc::invalid_job, std::move(why)));
    return rp;
  };
  if (st.state != job_state::running || st.deployed != g.size() || st.stopping)
    return refuse(fmt::format("job {} is not running",
                              g.graph().id.to_string()));
  if (g.count(execution_state::finished) > 0)
    return refuse("some subtasks of the job have finished: no more "
                  "checkpoints");
  auto id = st.checkpoints->trigger(self->clock().now(), true);
  auto kind = req.is_savepoint ? state::snapshot_kind::savepoint
              : req.full       ? state::snapshot_kind::full_checkpoint
                               : state::snapshot_kind::checkpoint;
  send_barrier_triggers(self, *id, kind);
  st.requests.emplace(*id, std::move(req));
  return rp;
}

} // namespace

/// A job started with execution.savepoint.path: its first deployment gets
/// the savepoint's state (when no stored checkpoint of its own came first).
void load_savepoint_then_schedule(self_ptr self) {
  auto& st = self->state;
  auto cfg = st.opts.config;
  cfg.apply(st.graph->graph().config, "job config");
  if (!st.opts.store || !cfg.is_set("execution.savepoint.path")) {
    request_slots(self);
    return;
  }
  auto path = cfg.text("execution.savepoint.path");
  auto ignore = cfg.boolean("execution.savepoint.ignore-unclaimed-state");
  self->request(st.opts.store, deploy_timeout, savepoint_atom_v, path)
    .then(
      [=](savepoint_data& sp) {
        auto& st = self->state;
        completed_checkpoint cp;
        auto problem = from_savepoint(*st.graph, sp, ignore, path, cp);
        if (!problem.empty()) {
          fail_job(self, problem);
          return;
        }
        st.checkpoints->restore(std::move(cp));
        st.restore_state = true;
        log_eventf("job {} ({}) starts from savepoint {}",
                   st.graph->graph().id.to_string(), st.graph->graph().name,
                   path);
        request_slots(self);
      },
      [=](caf::error& err) {
        fail_job(self, "cannot restore from savepoint: " + describe(err));
      });
}

caf::typed_response_promise<int64_t> checkpoint_now(self_ptr self, bool full) {
  checkpoint_request req;
  req.full = full;
  req.checkpoint = self->make_response_promise<int64_t>();
  auto rp = req.checkpoint;
  return request_checkpoint(self, rp, std::move(req));
}

caf::typed_response_promise<std::string>
savepoint_now(self_ptr self, std::string dir, bool stop) {
  checkpoint_request req;
  req.is_savepoint = true;
  req.dir = std::move(dir);
  req.stop = stop;
  req.savepoint = self->make_response_promise<std::string>();
  auto rp = req.savepoint;
  return request_checkpoint(self, rp, std::move(req));
}

} // namespace weir::job_master_detail
