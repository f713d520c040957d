// Jobmanager failover without task restarts (docs/state.md § Jobmanager
// failover without task restarts): a JobMaster that takes over its job
// first asks which workers kept its subtasks running, and adopts them when
// they are all of it; else it schedules the job as any other.
#include <algorithm>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "actors/job_master/attempt_adoption.hpp"
#include "actors/job_master/job_master_state.hpp"
#include "messages/errors.hpp"

namespace weir::job_master_detail {

namespace {

using namespace std::chrono_literals;

/// How often it asks the ResourceManager again while workers register.
constexpr auto poll_interval = 25ms;
/// With none of its slots held anywhere, it stops waiting after this long
/// once registered workers have enough free slots for it.
constexpr auto settle_time = 2s;

job_id job_of(self_ptr self) {
  return self->state.scheduler->graph().graph().id;
}

/// Cancels what the workers in `holders` kept of the job and asks for
/// slots, after logging why (when there is a why).
void start_afresh(self_ptr self, const std::vector<job_slot_holder>& holders,
                  const std::string& why) {
  auto& st = self->state;
  st.reconcile_until.reset();
  if (!still_leads(self, "start its subtasks afresh"))
    return;
  if (!why.empty())
    log_job(self, "starts its subtasks afresh: {}", why);
  // Before the slot request: the ResourceManager's grants to the same
  // workers come after these.
  for (auto& h : holders)
    self->send(h.te, free_atom_v, job_of(self));
  request_slots(self);
}

/// Whether the job is still waiting for its first round; else what workers
/// kept of it is canceled.
bool still_wanted(self_ptr self, uint64_t epoch,
                  const std::vector<job_slot_holder>& holders) {
  auto& st = self->state;
  if (epoch == st.job->epoch() && st.job->state() == job_state::running)
    return true;
  for (auto& h : holders)
    self->send(h.te, free_atom_v, job_of(self));
  return false;
}

/// Why this job's subtasks are never adopted ("": they may be).
std::string never_adopted(self_ptr self) {
  auto& st = self->state;
  if (st.scheduler->graph().graph().priority == job_priority::driver)
    return "an application's driver is not adopted";
  if (!st.settings.resumable_from_storage)
    return "its collect sink's rows went to the lost JobMaster";
  return {};
}

/// The reports of the workers that hold the job's slots.
struct gathered {
  std::vector<job_slot_holder> holders;
  std::vector<running_attempt> attempts;
  /// The holder (index) that reported each attempt.
  std::map<execution_attempt_id, size_t> reported_by;
  size_t waiting = 0;
  std::string problem;
  int64_t newest_checkpoint = 0;
};

/// Every adopted subtask reports here now and said which checkpoints it
/// saw: checkpoints go on after them, and exactly-once sinks publish what
/// the newest stored checkpoint covers (its JobMaster may have died before
/// it told them).
void adopted(self_ptr self, int64_t newest) {
  auto& st = self->state;
  st.adopting = false;
  st.checkpoints->skip_to(newest);
  if (auto* cp = st.checkpoints->latest())
    for (auto& s : st.scheduler->subtasks().all())
      self->send(s, commit_atom_v, cp->id);
  if (st.checkpoints->options().interval.count() > 0)
    self->delayed_send(self, st.checkpoints->options().interval,
                       trigger_atom_v, st.job->epoch());
}

/// The workers hold the job's slots for this JobMaster now: its round is
/// the adopted subtasks; each is told to report here.
void take_over(self_ptr self, std::shared_ptr<gathered> got,
               adoption_plan plan) {
  auto& st = self->state;
  auto& g = st.scheduler->graph();
  st.data_ports.resize(g.size());
  for (size_t flat = 0; flat < g.size(); ++flat) {
    auto& r = plan.attempts[flat];
    auto& h = got->holders[got->reported_by.at(r.attempt)];
    auto f = static_cast<int32_t>(flat);
    g.adopt(f, r.attempt, r.attempt_number);
    st.scheduler->subtasks().deployed(f, r.handle);
    self->monitor(r.handle);
    st.data_ports[flat] = h.data;
    st.scheduler->slots().adopt(g.executions()[flat].subtask, h.te.address(),
                                h.id.value);
  }
  std::vector<std::string> names;
  for (auto& h : got->holders) {
    st.executor_ids[h.te.address()] = h.id;
    if (st.executors.emplace(h.te.address(), h.te).second) {
      self->monitor(h.te);
      if (st.opts.heartbeat.interval.count() > 0)
        st.hb.watch(h.te.address(), self->clock().now());
    }
    names.push_back(h.id.value);
  }
  st.reconcile_until.reset();
  st.adopting = true;
  report_status(self);
  log_job(self, "adopted its {} running subtasks on {} (attempt {}), without "
                "a restart",
          g.size(), fmt::join(names, ", "),
          g.size() > 0 ? g.executions().front().attempt_number : 0);
  auto epoch = st.job->epoch();
  auto waiting = std::make_shared<size_t>(g.size());
  auto newest = std::make_shared<int64_t>(0);
  for (auto& s : st.scheduler->subtasks().all())
    self->request(s, deploy_timeout, adopt_atom_v, job_master_actor{self})
      .then(
        [=](int64_t seen) {
          *newest = std::max(*newest, seen);
          if (--*waiting == 0 && epoch == self->state.job->epoch())
            adopted(self, *newest);
        },
        [=](caf::error& err) {
          if (epoch == self->state.job->epoch())
            on_task_failure(self, "a subtask could not be adopted: "
                                    + describe(err));
        });
}

/// Every holder reported: adopt the job's subtasks if they are all of it.
void decide(self_ptr self, uint64_t epoch, std::shared_ptr<gathered> got) {
  auto& st = self->state;
  if (!still_wanted(self, epoch, got->holders))
    return;
  if (!got->problem.empty()) {
    start_afresh(self, got->holders, got->problem);
    return;
  }
  if (auto why = never_adopted(self); !why.empty()) {
    start_afresh(self, got->holders, why);
    return;
  }
  auto plan = plan_adoption(st.scheduler->graph(), got->attempts);
  if (!plan.problem.empty()) {
    start_afresh(self, got->holders, plan.problem);
    return;
  }
  // The workers first: their slots of the job are this JobMaster's now,
  // which fences its predecessor's deployments.
  auto waiting = std::make_shared<size_t>(got->holders.size());
  auto failed = std::make_shared<std::string>();
  auto done = [=] {
    if (!still_wanted(self, epoch, got->holders))
      return;
    if (!failed->empty())
      start_afresh(self, got->holders, *failed);
    else
      take_over(self, got, plan);
  };
  if (!still_leads(self, "adopt its subtasks"))
    return;
  for (auto& h : got->holders)
    self
      ->request(h.te, deploy_timeout, adopt_atom_v, job_of(self), st.leader,
                job_master_actor{self})
      .then(
        [=](int32_t) {
          if (--*waiting == 0)
            done();
        },
        [=, id = h.id](caf::error& err) {
          *failed = fmt::format("TaskExecutor {} did not hand over its slots: "
                                "{}",
                                id.value, describe(err));
          if (--*waiting == 0)
            done();
        });
}

/// Asks each holder which subtasks of the job it runs.
void gather_reports(self_ptr self, std::vector<job_slot_holder> holders) {
  auto epoch = self->state.job->epoch();
  auto got = std::make_shared<gathered>();
  got->holders = std::move(holders);
  got->waiting = got->holders.size();
  for (size_t i = 0; i < got->holders.size(); ++i)
    self
      ->request(got->holders[i].te, deploy_timeout, reconcile_atom_v,
                job_of(self))
      .then(
        [=](std::vector<running_attempt>& attempts) {
          for (auto& a : attempts) {
            got->reported_by[a.attempt] = i;
            got->attempts.push_back(std::move(a));
          }
          if (--got->waiting == 0)
            decide(self, epoch, got);
        },
        [=](caf::error& err) {
          got->problem = fmt::format("TaskExecutor {} did not report its "
                                     "subtasks: {}",
                                     got->holders[i].id.value, describe(err));
          if (--got->waiting == 0)
            decide(self, epoch, got);
        });
}

/// Which workers hold the job's slots: all it needs, or the wait is over.
void on_holders(self_ptr self, uint64_t epoch,
                std::vector<job_slot_holder> holders) {
  auto& st = self->state;
  if (!still_wanted(self, epoch, holders))
    return;
  int32_t held = 0;
  for (auto& h : holders)
    held += h.slots;
  auto now = self->clock().now(); // virtual time in tests
  auto needed = st.scheduler->graph().slots_needed();
  bool over = now >= *st.reconcile_until;
  if (held >= needed || (over && held > 0)) {
    gather_reports(self, std::move(holders));
    return;
  }
  if (over) {
    start_afresh(self, holders,
                 st.opts.reconcile_timeout.count() > 0
                   ? fmt::format("no worker kept them running (waited {} ms, "
                                 "jobmanager.failover.reconcile-timeout)",
                                 st.opts.reconcile_timeout.count())
                   : std::string{"no worker kept them running"});
    return;
  }
  if (held == 0 && now - st.reconcile_since >= settle_time) {
    // Workers that registered kept nothing of it; when they can run it,
    // it waits no longer for others.
    self
      ->request(st.rm, deploy_timeout, overview_atom_v, job_of(self),
                std::vector<resource_id>{})
      .then(
        [=](int32_t slots) {
          if (!still_wanted(self, epoch, {}))
            return;
          if (slots >= needed)
            start_afresh(self, {}, "no registered worker kept them running");
          else
            self->delayed_send(self, poll_interval, reconcile_atom_v);
        },
        [=](caf::error&) {
          self->delayed_send(self, poll_interval, reconcile_atom_v);
        });
    return;
  }
  self->delayed_send(self, poll_interval, reconcile_atom_v);
}

} // namespace

void schedule_first_round(self_ptr self) {
  auto& st = self->state;
  if (!st.opts.takes_over) {
    request_slots(self);
    return;
  }
  st.reconcile_since = self->clock().now();
  st.reconcile_until = st.reconcile_since + st.opts.reconcile_timeout;
  on_reconcile_poll(self);
}

bool taking_over(self_ptr self) {
  return self->state.adopting || self->state.reconcile_until.has_value();
}

void on_reconcile_poll(self_ptr self) {
  auto& st = self->state;
  if (!st.reconcile_until)
    return;
  auto epoch = st.job->epoch();
  self->request(st.rm, deploy_timeout, reconcile_atom_v, job_of(self))
    .then(
      [=](std::vector<job_slot_holder>& holders) {
        on_holders(self, epoch, std::move(holders));
      },
      [=](caf::error& err) {
        if (still_wanted(self, epoch, {}))
          start_afresh(self, {},
                       "the ResourceManager did not say which workers hold "
                       "its slots: "
                         + describe(err));
      });
}

} // namespace weir::job_master_detail
