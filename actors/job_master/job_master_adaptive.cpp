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

/// Fails the job for good with `cause`: at once when it waits to restart
/// (nothing runs), else as any failure.
void fail_for_good(self_ptr self, const std::string& cause) {
  auto& st = self->state;
  auto from = st.job->state();
  if (st.job->fail_restarting(cause)) {
    log_transition(self, from);
    maybe_finalize(self); // nothing runs: it ends now
  } else {
    fail_job(self, cause);
  }
}

/// Whether the round has waited for slots past resource-wait-timeout
/// (since `since`, set now when unset); then the job fails.
bool waited_too_long(self_ptr self,
                     std::optional<std::chrono::steady_clock::time_point>& since,
                     const std::string& waiting_for) {
  auto& st = self->state;
  auto now = self->clock().now();
  if (!since)
    since = now;
  auto wait = st.settings.adaptive.resource_wait;
  if (now - *since < wait)
    return false;
  since.reset();
  fail_for_good(self, fmt::format("{} within jobmanager.adaptive-scheduler."
                                  "resource-wait-timeout ({} ms)",
                                  waiting_for, wait.count()));
  return true;
}

} // namespace

void size_round_then(self_ptr self, job_state expected,
                     std::function<void()> go) {
  auto epoch = self->state.job->epoch();
  self->state.sizing = true;
  ask_available(self, [=](int32_t available) {
    auto& st = self->state;
    st.sizing = false;
    // Sized for a round that is gone (a cancel, a failure meanwhile).
    if (st.job->epoch() != epoch || st.job->state() != expected)
      return;
    auto n = st.adaptive->target(available);
    if (n == 0) {
      if (!st.waiting_since)
        log_job(self, "waits for a slot (adaptive scheduler)");
      if (!waited_too_long(self, st.waiting_since, "no slot for the job"))
        st.waiting_round = [self, expected, go] {
          size_round_then(self, expected, go);
        };
      return;
    }
    st.waiting_since.reset();
    auto target = st.adaptive->graph_at(n);
    if (!same_parallelism(target, st.scheduler->graph().graph())) {
      if (auto err = rebuild_at(self, target)) {
        fail_for_good(self, describe(err));
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
    std::exchange(st.waiting_round, nullptr)();
    return;
  }
  auto eligible = [self] {
    auto& st = self->state;
    auto& g = st.scheduler->graph();
    return st.job->state() == job_state::running
           && st.scheduler->subtasks().complete() && !st.rescale.busy()
           && !taking_over(self)
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
  // Slots counted but never offered (another job took them, or they fit
  // no request) must not resize the round forever.
  if (waited_too_long(self, st.slots_missing_since,
                      "the slots the job was sized for did not come"))
    return;
  log_job(self, "sizes its round again: {}", why);
  st.resize_now = true;
  set_state(self, job_state::restarting);
  cancel_all(self);
}

} // namespace weir::job_master_detail
