// The adaptive scheduler (jobmanager.scheduler: adaptive; docs/state.md §
// Adaptive scheduler): each round sized from the slots the job could hold,
// and a rescale in place once more slots stayed available for
// jobmanager.adaptive-scheduler.resource-stabilization-timeout. The
// decisions are adaptive_parallelism's; the rescale is
// job_master_rescale.cpp's.
#include <fmt/format.h>

#include "actors/job_master/job_master_state.hpp"
#include "messages/errors.hpp"

namespace weir::job_master_detail {

namespace {

/// How often the JobMaster looks at the slots the job could hold.
constexpr auto poll_interval = std::chrono::seconds(1);

/// Asks the ResourceManager how many slots the job could hold now (not
/// counting those of TaskExecutors lost since the last sizing), then
/// `then(available)`; an unanswered question counts as none.
template <class F>
void ask_available(self_ptr self, F then) {
  auto& st = self->state;
  auto lost = std::exchange(st.lost_since_sizing, {});
  self
    ->request(st.rm, deploy_timeout, overview_atom_v,
              st.scheduler->graph().graph().id, lost)
    .then([=](int32_t available) { then(available); },
          [=](caf::error& err) {
            log_job(self, "could not ask for slots: {}", describe(err));
            then(0);
          });
}

/// Whether `a` and `b` run every vertex at the same parallelism.
bool same_parallelism(const job_graph& a, const job_graph& b) {
  for (size_t v = 0; v < a.vertices.size() && v < b.vertices.size(); ++v)
    if (a.vertices[v].parallelism != b.vertices[v].parallelism)
      return false;
  return true;
}

/// No slot for the round: it waits (the poll sizes it again), or, past
/// resource-wait-timeout, the job fails.
void wait_for_slots(self_ptr self, std::function<void()> go) {
  auto& st = self->state;
  auto now = self->clock().now();
  if (!st.waiting_since) {
    st.waiting_since = now;
    log_job(self, "waits for a slot (adaptive scheduler)");
  }
  auto wait = st.settings.adaptive.resource_wait;
  if (now - *st.waiting_since < wait) {
    st.waiting_round = std::move(go);
    return;
  }
  st.waiting_since.reset();
  auto cause = fmt::format("no slot for the job within "
                           "jobmanager.adaptive-scheduler.resource-wait-"
                           "timeout ({} ms)",
                           wait.count());
  auto from = st.job->state();
  if (st.job->fail_restarting(cause)) {
    log_transition(self, from);
    maybe_finalize(self); // nothing runs: it ends now
  } else {
    fail_job(self, cause);
  }
}

} // namespace

void size_round_then(self_ptr self, std::function<void()> go) {
  ask_available(self, [=](int32_t available) {
    auto& st = self->state;
    if (is_globally_terminal(st.job->state())
        || st.job->state() == job_state::cancelling
        || st.job->state() == job_state::failing)
      return;
    auto n = st.adaptive->target(available);
    if (n == 0) {
      wait_for_slots(self, go);
      return;
    }
    st.waiting_since.reset();
    auto target = st.adaptive->graph_at(n);
    if (!same_parallelism(target, st.scheduler->graph().graph())) {
      if (auto err = rebuild_at(self, target)) {
        fail_job(self, describe(err));
        return;
      }
      log_job(self, "runs at parallelism {} ({} slots available, up to {} "
                    "wanted)",
              n, available, st.adaptive->desired());
    }
    go();
  });
}

void on_adaptive_poll(self_ptr self) {
  auto& st = self->state;
  self->delayed_send(self, poll_interval, overview_atom_v);
  if (st.waiting_round) {
    size_round_then(self, std::exchange(st.waiting_round, nullptr));
    return;
  }
  auto eligible = [self] {
    auto& st = self->state;
    auto& g = st.scheduler->graph();
    return st.job->state() == job_state::running
           && st.scheduler->subtasks().complete() && !st.rescale.busy()
           && !st.stop.busy() && g.count(execution_state::finished) == 0
           && g.slots_needed() < st.adaptive->desired();
  };
  if (!eligible())
    return;
  if (!st.settings.resumable_from_storage)
    return; // it would start over from its sources: it stays as it is
  ask_available(self, [self, eligible](int32_t available) {
    auto& st = self->state;
    if (!eligible())
      return;
    auto current = st.scheduler->graph().slots_needed();
    auto n = st.adaptive->scale_up(current, available, self->clock().now());
    if (!n)
      return;
    log_job(self, "scales up: {} slots available, it runs at {}", available,
            current);
    begin_rescale(self, st.adaptive->graph_at(*n),
                  [self](const std::string& failure) {
                    if (!failure.empty())
                      log_job(self, "did not scale up: {}", failure);
                  });
  });
}

void resize_round(self_ptr self, const std::string& why) {
  auto& st = self->state;
  log_job(self, "sizes its round again: {}", why);
  st.resize_now = true;
  set_state(self, job_state::restarting);
  cancel_all(self);
}

} // namespace weir::job_master_detail
