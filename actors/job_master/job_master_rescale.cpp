// The JobMaster's in-place rescale (docs/state.md § Rescaling a running
// job): a checkpoint now, every subtask stopped, the next round built at
// the new parallelism and restoring that checkpoint split by key groups;
// back to the old parallelism should that round fail before it runs. The
// states are rescale_operation's.
#include <optional>

#include <fmt/format.h>

#include "actors/job_master/job_master_state.hpp"
#include "actors/job_master/savepoint_mapping.hpp"
#include "messages/errors.hpp"
#include "operators/registry.hpp"
#include "plan/savepoint_fit.hpp"

namespace weir::job_master_detail {

namespace {

/// `g` with every vertex at parallelism `n` (Flink's rescaling sets the
/// parallelism of every vertex).
job_graph at_parallelism(job_graph g, int32_t n) {
  for (auto& v : g.vertices)
    v.parallelism = n;
  return g;
}

/// The parallelism every task runs at, or 0 when they differ.
int32_t uniform_parallelism(const execution_graph& g) {
  int32_t p = 0;
  for (auto& t : g.tasks()) {
    if (p != 0 && t.parallelism != p)
      return 0;
    p = t.parallelism;
  }
  return p;
}

/// Why the job cannot rescale to `n` now, with the error's code.
struct rescale_refusal {
  errc code = errc::not_running;
  std::string why;
};

std::optional<rescale_refusal> rescale_problem(self_ptr self, int32_t n) {
  auto& st = self->state;
  auto& g = st.scheduler->graph();
  auto now = [](std::string why) {
    return rescale_refusal{errc::not_running, std::move(why)};
  };
  auto never = [](std::string why) {
    return rescale_refusal{errc::invalid_job, std::move(why)};
  };
  if (n < 1 || n > max_parallelism)
    return never(fmt::format("parallelism {} is not between 1 and {}", n,
                             max_parallelism));
  for (auto& t : g.tasks())
    if (n > t.max_parallelism)
      return never(fmt::format("parallelism {} is above the max parallelism "
                               "of '{}' ({}: its key groups, "
                               "pipeline.max-parallelism)",
                               n, t.name, t.max_parallelism));
  if (g.graph().priority == job_priority::driver)
    return never("it is an application's driver");
  if (st.adaptive)
    return never("the adaptive scheduler sets its parallelism from the slots "
                 "it can get (jobmanager.scheduler: adaptive)");
  if (!st.settings.resumable)
    return never("a sink of it is at-least-once, so a restart starts over "
                 "from its sources");
  if (!st.settings.resumable_from_storage)
    return never("its collect sink's rows are kept by subtask for its client");
  if (st.job->state() != job_state::running)
    return now(fmt::format("it is {}", to_string(st.job->state())));
  if (!st.scheduler->subtasks().complete())
    return now("it is being deployed");
  if (st.stop.busy())
    return now("it is being stopped");
  if (st.rescale.busy())
    return now(fmt::format("its rescale to {} is under way ({})",
                           st.rescale.to(), to_string(st.rescale.current())));
  if (g.count(execution_state::finished) > 0)
    return now("some of its subtasks have finished");
  if (taking_over(self))
    return now("it is being taken over after a jobmanager failover");
  return std::nullopt;
}

/// A refusal of the request (the job runs on as it was).
caf::error refusal(self_ptr self, const rescale_refusal& r) {
  return make_error(r.code,
                    fmt::format("cannot rescale job {}: {}",
                                self->state.scheduler->graph().graph().id.to_string(),
                                r.why));
}

/// Triggers the rescale's checkpoint, once the cluster has the slots.
void start_rescale(self_ptr self, int32_t n,
                   caf::typed_response_promise<int32_t> rp,
                   const cluster_overview& cluster) {
  auto& st = self->state;
  if (auto problem = rescale_problem(self, n)) {
    rp.deliver(refusal(self, *problem));
    return;
  }
  auto& g = st.scheduler->graph();
  auto held = g.slots_needed();
  auto needed = execution_graph{at_parallelism(g.graph(), n)}.slots_needed();
  if (needed > held + cluster.slots_free) {
    rp.deliver(refusal(
      self, {errc::slot_unavailable,
             fmt::format("it needs {} slots at parallelism {}; it holds {} "
                         "and the cluster has {} free",
                         needed, n, held, cluster.slots_free)}));
    return;
  }
  begin_rescale(self, at_parallelism(g.graph(), n),
                [rp, n](std::string failure) mutable {
                  if (failure.empty())
                    rp.deliver(n);
                  else
                    rp.deliver(
                      make_error(errc::not_running, std::move(failure)));
                });
}

} // namespace

void begin_rescale(self_ptr self, job_graph target,
                   rescale_operation::reply_fn reply) {
  auto& st = self->state;
  auto& g = st.scheduler->graph();
  auto id = trigger_checkpoint_now(self);
  auto to = execution_graph{target}.slots_needed();
  st.rescale_from = g.graph();
  st.rescale_target = std::move(target);
  st.rescale.begin(g.slots_needed(), to, id, std::move(reply));
  self->delayed_send(self, st.checkpoints->options().timeout, rescale_atom_v,
                     id);
  log_job(self, "rescales to parallelism {}: takes checkpoint {}", to, id);
}

void request_rescale(self_ptr self, int32_t n,
                     caf::typed_response_promise<int32_t> rp) {
  auto& st = self->state;
  if (auto problem = rescale_problem(self, n)) {
    rp.deliver(refusal(self, *problem));
    return;
  }
  if (uniform_parallelism(st.scheduler->graph()) == n) {
    rp.deliver(n); // it runs at n already
    return;
  }
  self->request(st.rm, deploy_timeout, overview_atom_v)
    .then([=](cluster_overview& o) { start_rescale(self, n, rp, o); },
          [=](caf::error& err) mutable {
            rp.deliver(refusal(self, {errc::slot_unavailable,
                                      "the ResourceManager does not answer: "
                                        + describe(err)}));
          });
}

void rescale_checkpoint_taken(self_ptr self, const completed_checkpoint& cp) {
  auto& st = self->state;
  auto& g = st.scheduler->graph();
  auto to = st.rescale.to();
  // The TaskExecutors say at restore what they cannot split; what the
  // built-in operators cannot is known now, and refused before any
  // subtask stops.
  auto base = std::make_shared<savepoint_data>(to_savepoint(g, cp));
  if (auto err = check_savepoint_fits(st.rescale_target, *base,
                                      false, fmt::format("checkpoint {}", cp.id),
                                      ops::registry::builtin())) {
    rescale_failed(self, describe(err));
    return;
  }
  if (st.job->state() != job_state::running) {
    rescale_failed(self, fmt::format("the job is {}", to_string(st.job->state())));
    return;
  }
  st.rescale.taken();
  st.rescale_base = base;
  st.rescale_base_id = cp.id;
  log_job(self, "rescales from parallelism {} to {} from checkpoint {}",
          st.rescale.from(), to, cp.id);
  set_state(self, job_state::restarting);
  cancel_all(self);
}

void rescale_failed(self_ptr self, const std::string& why) {
  auto& st = self->state;
  if (!st.rescale.busy())
    return;
  auto to = st.rescale.to();
  if (st.rescale.failed(fmt::format("rescale of job {} to parallelism {} "
                                    "failed: {}",
                                    st.scheduler->graph().graph().id.to_string(),
                                    to, why)))
    log_job(self, "goes back to parallelism {}: its rescale to {} failed: {}",
            st.rescale.from(), to, why);
  else
    log_job(self, "is not rescaled to {}: {}", to, why);
}

caf::error rebuild_at(self_ptr self, const job_graph& target) {
  auto& st = self->state;
  auto& old = st.scheduler->graph();
  auto next = std::make_unique<jm_scheduler>(target);
  auto& g = next->graph();
  // The same key groups: pipeline.max-parallelism, else the old ones.
  if (st.settings.max_parallelism)
    (void) g.set_max_parallelism(*st.settings.max_parallelism);
  std::map<std::string, int32_t> groups;
  for (size_t v = 0; v < old.graph().vertices.size(); ++v)
    groups[old.graph().vertices[v].id]
      = old.max_parallelism_of(static_cast<int32_t>(v));
  g.adopt_max_parallelism(groups);
  g.set_attempt_number(old.executions().front().attempt_number);
  // The state: the newest checkpoint as a savepoint (vertex and subtask
  // index), mapped onto the new subtasks. One mapped already (the current
  // graph restores it and took no checkpoint since) is mapped again from
  // the savepoint it came from, never from its mapped shares.
  if (auto* latest = st.checkpoints->latest()) {
    auto base = latest->id == st.rescale_base_id && st.rescale_base
                  ? st.rescale_base
                  : std::make_shared<const savepoint_data>(
                    to_savepoint(old, *latest));
    completed_checkpoint cp;
    cp.id = latest->id;
    cp.bytes = latest->bytes;
    cp.duration = latest->duration;
    if (auto err = from_savepoint(g, *base, false,
                                  fmt::format("checkpoint {}", cp.id), cp))
      return err;
    st.checkpoints->rescale(static_cast<int32_t>(g.size()), std::move(cp));
    st.rescale_base = std::move(base);
    st.rescale_base_id = st.checkpoints->latest()->id;
  } else {
    st.checkpoints->rescale(static_cast<int32_t>(g.size()), std::nullopt);
  }
  st.scheduler = std::move(next);
  st.data_ports.clear();
  return caf::none;
}

void rebuild_for_rescale(self_ptr self) {
  auto& st = self->state;
  if (!st.rescale.next_round())
    return;
  // Rolling back: each vertex at the parallelism it had.
  bool back = st.rescale.current() == rescale_operation::phase::rolling_back;
  if (auto err = rebuild_at(self, back ? st.rescale_from : st.rescale_target)) {
    // Checked when the checkpoint was taken: the old graph runs again.
    rescale_failed(self, describe(err));
    st.rescale.switched();
    return;
  }
  st.rescale.switched();
  log_job(self, "runs at parallelism {} from now on",
          st.scheduler->graph().slots_needed());
}

void maybe_rescaled(self_ptr self) {
  auto& st = self->state;
  auto& g = st.scheduler->graph();
  if (st.rescale.current() != rescale_operation::phase::deploying
      || g.count(execution_state::running) != static_cast<int32_t>(g.size()))
    return;
  log_job(self, "is rescaled to parallelism {}: every subtask runs",
          st.rescale.to());
  st.rescale.running();
}

} // namespace weir::job_master_detail
