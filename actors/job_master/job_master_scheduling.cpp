// The JobMaster's scheduling (docs/architecture.md § Slot protocol): slot
// requests and offers, deployment and start. Failover is in
// job_master_failover.cpp; the state diagram is atop job_master.cpp.
#include <algorithm>

#include <fmt/format.h>

#include "actors/common/heartbeat_sender.hpp"
#include "actors/job_master/job_master_state.hpp"
#include "config/build_features.hpp"
#include "messages/errors.hpp"

namespace weir::job_master_detail {

namespace {

/// Each execution's wiring: its consumers' actors, and where they and its
/// producers run (their attempts and data ports).
std::vector<subtask_wiring> wirings(jm_state& st) {
  auto& g = st.scheduler->graph();
  auto n = g.size();
  st.data_ports.resize(n);
  std::vector<subtask_wiring> out(n);
  for (size_t i = 0; i < n; ++i) {
    auto flat = static_cast<int32_t>(i);
    out[i].consumers = st.scheduler->consumers_of(flat);
    for (auto& list : g.consumers(flat)) {
      std::vector<consumer_address> addrs;
      addrs.reserve(list.size());
      for (auto c : list) {
        auto cu = static_cast<size_t>(c);
        addrs.push_back(
          consumer_address{g.executions()[cu].attempt, st.data_ports[cu]});
        auto& from = out[cu].producers;
        if (std::find(from.begin(), from.end(), st.data_ports[i]) == from.end())
          from.push_back(st.data_ports[i]);
      }
      out[i].addresses.push_back(std::move(addrs));
    }
  }
  return out;
}

void start_all(self_ptr self) {
  auto& st = self->state;
  auto& g = st.scheduler->graph();
  st.slots_missing_since.reset(); // every slot of the round came
#if WEIR_FAULT_INJECTION
  // Test hook: the first N JobMasters of a job crash once it is deployed.
  if (st.opts.incarnation < st.settings.crashes_to_inject)
    throw std::runtime_error(fmt::format(
      "injected JobMaster crash {} of {} (weir.fault.jobmaster-crashes)",
      st.opts.incarnation + 1, st.settings.crashes_to_inject));
#endif
  // Consumers first (job_scheduler::consumers_of says why).
  auto wiring = wirings(st);
  for (auto i = g.size(); i-- > 0;)
    self->send(st.scheduler->subtasks()[i], start_atom_v, std::move(wiring[i]));
  if (st.checkpoints->options().interval.count() > 0)
    self->delayed_send(self, st.checkpoints->options().interval,
                       trigger_atom_v, st.job->epoch());
}

/// Deploys the subtasks of the shared slots just accepted from `te`.
void deploy(self_ptr self, task_executor_actor te,
            const std::vector<std::pair<int32_t, allocation_id>>& slots,
            data_endpoint data_port) {
  if (!still_leads(self, "deploy its subtasks"))
    return;
  auto& st = self->state;
  auto* cp = st.checkpoints->latest();
  auto batch = st.scheduler->deploy(slots, st.settings.backend,
                                    cp != nullptr ? &cp->states : nullptr);
  auto epoch = st.job->epoch();
  self
    ->request(te, deploy_timeout, submit_atom_v, st.leader,
              job_master_actor{self}, std::move(batch.tasks))
    .then(
      [=, flats = std::move(batch.executions)](
        std::vector<subtask_actor>& spawned) {
        auto& st = self->state;
        if (epoch != st.job->epoch())
          return; // a restart freed these slots; the TaskExecutor stops them
        for (auto& s : spawned)
          self->monitor(s);
        st.data_ports.resize(st.scheduler->graph().size());
        for (auto flat : flats)
          st.data_ports[static_cast<size_t>(flat)] = data_port;
        bool complete = st.scheduler->deployed(flats, spawned);
        if (st.job->state() != job_state::running) {
          cancel_all(self);
          return;
        }
        if (complete)
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
              st.scheduler->graph().graph().id, job_master_actor{self}, std::move(requests))
    .then([](int32_t) {},
          [=](caf::error& err) {
            fail_job(self, "slot request refused: " + describe(err));
          });
}

} // namespace

std::vector<allocation_id> on_offer(self_ptr self, const resource_id& from,
                                    const std::vector<slot_offer>& offers) {
  auto& st = self->state;
  auto te = caf::actor_cast<task_executor_actor>(self->current_sender());
  if (st.job->state() != job_state::running || !te)
    return {};
  auto accepted = st.scheduler->slots().accept(te.address(), from.value, offers);
  st.executor_ids[te.address()] = from;
  if (st.executors.emplace(te.address(), te).second) {
    self->monitor(te);
    if (st.opts.heartbeat.interval.count() > 0)
      st.hb.watch(te.address(), self->clock().now());
  }
  if (!accepted.slots.empty()) {
    report_status(self);
    deploy(self, te, accepted.slots, offers.front().data);
  }
  return std::move(accepted.allocations);
}

void on_update(self_ptr self, execution_attempt_id attempt, execution_state s,
               const io_metrics& m, const std::string& error) {
  auto& st = self->state;
  auto& g = st.scheduler->graph();
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
    on_task_failure(self, error, self->state.scheduler->site_of(flat));
  else if (s == execution_state::canceled
           && st.job->state() == job_state::running)
    on_task_failure(self, "a subtask was canceled outside the JobMaster (its "
                          "TaskExecutor is shutting down)");
  else if (s == execution_state::running)
    maybe_rescaled(self);
  maybe_finalize(self);
}

void request_slots(self_ptr self) {
  auto& st = self->state;
  send_slot_requests(self, st.scheduler->request_slots(st.settings.slot_profile,
                                                       now_ms()));
  report_status(self);
  // The adaptive scheduler sized the round from slots it was told of: when
  // they do not all come soon, it sizes the round again.
  auto timeout = st.settings.slot_request_timeout;
  if (st.adaptive)
    timeout = std::min<std::chrono::milliseconds>(
      timeout, std::max<std::chrono::milliseconds>(
                 st.settings.adaptive.stabilization, std::chrono::seconds(2)));
  self->delayed_send(self, timeout, tick_atom_v, st.job->epoch());
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
  auto replacements = st.scheduler->slots().replace(lost, st.settings.slot_profile);
  if (replacements.empty() || st.job->state() != job_state::running)
    return;
  send_slot_requests(self, std::move(replacements));
}

} // namespace weir::job_master_detail
