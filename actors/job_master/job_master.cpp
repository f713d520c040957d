// The JobMaster of one job: a thin actor around the execution graph.
//
//   CREATED ──schedule──▶ RUNNING ──all subtasks FINISHED──▶ FINISHED
//                          │ │ └─a failure, no restart left─▶ FAILING ──all stopped──▶ FAILED
//                          │ └─a failure, restart allowed─▶ RESTARTING ──all stopped, delay──▶ RUNNING
//                          └──cancel──▶ CANCELLING ──all stopped──▶ CANCELED
//
// A failure is a subtask that FAILED or died, or a lost TaskExecutor. A
// restart is a full one: every subtask is stopped, the slots are given back,
// and the job is scheduled again from its sources with new attempts (there
// are no checkpoints yet), so bounded jobs still produce exact results.
//
// Scheduling follows FLIP-6: request one slot per shared slot from the
// ResourceManager; TaskExecutors offer the slots; each accepted slot gets
// its subtasks deployed at once; once every subtask is deployed, each gets
// the handles of its consumers and starts.
#include "actors/job_master/job_master.hpp"

#include <fmt/format.h>

#include "actors/common/crash.hpp"
#include "actors/common/event_log.hpp"
#include "actors/job_master/job_master_state.hpp"
#include "actors/job_master/savepoint_mapping.hpp"
#include "messages/errors.hpp"

namespace weir {

namespace job_master_detail {

using namespace std::chrono_literals;

void set_state(self_ptr self, job_state to) {
  auto& st = self->state;
  if (!is_valid_transition(st.state, to))
    return;
  log_eventf("job {} ({}) switched from {} to {}",
             st.graph->graph().id.to_string(), st.graph->graph().name,
             to_string(st.state), to_string(to));
  st.state = to;
}

/// Ends the job: frees its slots everywhere and reports to the Dispatcher.
void finalize(self_ptr self) {
  auto& st = self->state;
  if (st.finalized)
    return;
  st.finalized = true;
  if (st.state == job_state::failing)
    set_state(self, job_state::failed);
  else if (st.state == job_state::cancelling)
    set_state(self, job_state::canceled);
  else if (st.graph->all_finished() || st.stopping)
    set_state(self, job_state::finished);
  fail_requests(self, "the job ended");
  job_result result;
  result.id = st.graph->graph().id;
  result.name = st.graph->graph().name;
  result.state = st.state;
  result.error = st.failure;
  result.start_time_ms = st.start_time_ms;
  result.end_time_ms = now_ms();
  result.metrics = st.graph->total_metrics();
  for (auto& [flat, rows] : st.collected)
    result.collected.insert(result.collected.end(),
                            std::make_move_iterator(rows.begin()),
                            std::make_move_iterator(rows.end()));
  std::set<caf::actor_addr> told;
  for (auto& te : st.executor_of_slot)
    if (te && told.insert(te.address()).second)
      self->send(te, free_atom_v, result.id);
  self->send(st.rm, disconnect_atom_v, result.id, st.leader);
  self->send(st.dispatcher, done_atom_v, std::move(result));
  self->quit();
}

void maybe_finalize(self_ptr self) {
  auto& st = self->state;
  if (!st.graph->all_terminal())
    return;
  if (st.state == job_state::restarting) {
    self->delayed_send(self, st.restart_delay, restart_atom_v, st.epoch);
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

/// Fails the job for good.
void fail_job(self_ptr self, std::string cause) {
  auto& st = self->state;
  if (st.state != job_state::running && st.state != job_state::created)
    return;
  st.failure = std::move(cause);
  set_state(self, job_state::failing);
  cancel_all(self);
}

/// A subtask or TaskExecutor failed: restart the job if the restart strategy
/// allows it, else fail it.
void on_task_failure(self_ptr self, std::string cause) {
  auto& st = self->state;
  if (st.state != job_state::running && st.state != job_state::created)
    return; // already failing, restarting or cancelling
  auto delay = st.restarts->on_failure(self->clock().now());
  if (!delay) {
    auto why = st.restarts->never_restarts()
                 ? cause
                 : cause + " (" + st.restarts->reason() + ")";
    fail_job(self, std::move(why));
    return;
  }
  log_eventf("job {} ({}) restarts in {} ms after: {}",
             st.graph->graph().id.to_string(), st.graph->graph().name,
             delay->count(), cause);
  st.restart_delay = *delay;
  set_state(self, job_state::restarting);
  cancel_all(self);
}

void start_all(self_ptr self) {
  auto& st = self->state;
  auto& g = *st.graph;
#ifdef WEIR_FAULT_INJECTION
  // Test hook: the first N JobMasters of a job crash once it is deployed.
  if (st.opts.incarnation < st.crashes_to_inject)
    throw std::runtime_error(fmt::format(
      "injected JobMaster crash {} of {} (weir.fault.jobmaster-crashes)",
      st.opts.incarnation + 1, st.crashes_to_inject));
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
                       trigger_atom_v, st.epoch);
}

/// Deploys the subtasks of the shared slots just accepted from `te`.
void deploy(self_ptr self, task_executor_actor te,
            const std::vector<std::pair<int32_t, allocation_id>>& slots) {
  auto& st = self->state;
  auto& g = *st.graph;
  std::vector<task_deployment> batch;
  std::vector<int32_t> flats;
  for (auto& [slot, alloc] : slots) {
    for (auto flat : g.executions_in_slot(slot)) {
      g.transition(flat, execution_state::scheduled);
      g.transition(flat, execution_state::deploying);
      batch.push_back(g.deployment(flat, alloc));
      batch.back().backend = st.backend;
      batch.back().code = g.graph().code;
      if (auto* cp = st.restore_state ? st.checkpoints->latest() : nullptr)
        if (auto i = cp->states.find(flat); i != cp->states.end())
          batch.back().restore = i->second;
      flats.push_back(flat);
    }
  }
  auto epoch = st.epoch;
  self
    ->request(te, deploy_timeout, submit_atom_v, st.leader, job_master_actor{self},
              std::move(batch))
    .then(
      [=](std::vector<subtask_actor>& spawned) {
        auto& st = self->state;
        if (epoch != st.epoch)
          return; // a restart freed these slots; the TaskExecutor stops them
        for (size_t i = 0; i < spawned.size() && i < flats.size(); ++i) {
          auto flat = static_cast<size_t>(flats[i]);
          st.handles[flat] = spawned[i];
          st.flat_by_addr[spawned[i].address()] = flats[i];
          self->monitor(spawned[i]);
          ++st.deployed;
        }
        if (st.state != job_state::running) {
          cancel_all(self);
          return;
        }
        if (st.deployed == st.graph->size())
          start_all(self);
      },
      [=](caf::error& err) {
        if (epoch == self->state.epoch)
          on_task_failure(self, "deployment failed: " + describe(err));
      });
}

std::vector<allocation_id> on_offer(self_ptr self, const resource_id& from,
                                    std::vector<slot_offer>& offers) {
  auto& st = self->state;
  auto te = caf::actor_cast<task_executor_actor>(self->current_sender());
  std::vector<allocation_id> accepted;
  std::vector<std::pair<int32_t, allocation_id>> slots;
  if (st.state != job_state::running || !te)
    return accepted;
  for (auto& o : offers) {
    auto i = st.pending_slots.find(o.alloc);
    if (i == st.pending_slots.end())
      continue;
    accepted.push_back(o.alloc);
    slots.emplace_back(i->second, o.alloc);
    st.executor_of_slot[static_cast<size_t>(i->second)] = te;
    st.executor_name_of_slot[static_cast<size_t>(i->second)] = from.value;
    st.pending_slots.erase(i);
  }
  if (st.executors.emplace(te.address(), te).second) {
    self->monitor(te);
    if (st.opts.heartbeat.interval.count() > 0)
      st.hb.watch(te.address(), self->clock().now());
  }
  if (!slots.empty())
    deploy(self, te, slots);
  return accepted;
}

void on_update(self_ptr self, execution_attempt_id attempt, execution_state s,
               const io_metrics& m, std::string& error) {
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
  if (s == execution_state::failed)
    on_task_failure(self, error);
  else if (s == execution_state::canceled && st.state == job_state::running
           && !st.stopping)
    on_task_failure(self, "a subtask was canceled outside the JobMaster (its "
                          "TaskExecutor is shutting down)");
  maybe_finalize(self);
}

void request_slots(self_ptr self) {
  auto& st = self->state;
  std::vector<slot_request> requests;
  for (int32_t k = 0; k < st.graph->slots_needed(); ++k) {
    auto alloc = allocation_id::random();
    st.pending_slots.emplace(alloc, k);
    requests.push_back(slot_request{alloc, st.slot_profile});
  }
  self
    ->request(st.rm, deploy_timeout, request_atom_v, st.leader,
              st.graph->graph().id, job_master_actor{self}, std::move(requests))
    .then([](int32_t) {},
          [=](caf::error& err) {
            fail_job(self, "slot request refused: " + describe(err));
          });
  self->delayed_send(self, st.opts.slot_request_timeout, tick_atom_v, st.epoch);
}

/// A TaskExecutor died, became unreachable or stopped answering heartbeats:
/// its subtasks are gone.
void on_executor_lost(self_ptr self, const caf::actor_addr& lost,
                      const std::string& reason) {
  auto& st = self->state;
  st.executors.erase(lost);
  st.hb.unwatch(lost);
  std::string name;
  bool held_slots = false;
  auto& g = *st.graph;
  for (size_t k = 0; k < st.executor_of_slot.size(); ++k) {
    if (!st.executor_of_slot[k] || st.executor_of_slot[k].address() != lost)
      continue;
    name = st.executor_name_of_slot[k];
    held_slots = true;
    st.executor_of_slot[k] = nullptr;
    for (auto flat : g.executions_in_slot(static_cast<int32_t>(k)))
      if (!is_terminal(g.executions()[static_cast<size_t>(flat)].state))
        g.transition(flat, execution_state::failed);
  }
  if (!held_slots)
    return; // it held nothing of the current round (say, before a restart)
  on_task_failure(self, fmt::format("TaskExecutor {} lost: {}", name, reason));
  maybe_finalize(self);
}

/// Sends a heartbeat request to every TaskExecutor holding the job's slots
/// (ahead of their other messages); one silent for heartbeat.timeout, or
/// whose requests fail heartbeat.rpc-failure-threshold times in a row, is
/// lost.
void send_heartbeats(self_ptr self) {
  auto& st = self->state;
  auto& opts = st.hb.options();
  for (auto& [addr, te] : st.executors) {
    auto peer = addr;
    self->request<caf::message_priority::high>(te, opts.timeout,
                                               heartbeat_atom_v)
      .then(
        [=](const resource_id&) {
          self->state.hb.heard_from(peer, self->clock().now());
        },
        [=](caf::error& err) {
          if (err != caf::sec::request_timeout
              && self->state.hb.request_failed(peer))
            on_executor_lost(self, peer,
                             "heartbeat requests failed: " + describe(err));
        });
  }
  for (auto& peer : st.hb.expired(self->clock().now()))
    on_executor_lost(self, peer,
                     fmt::format("no heartbeat for {} ms", opts.timeout.count()));
  self->delayed_send(self, opts.interval, beat_atom_v);
}

/// Allocations died with their TaskExecutor before it offered them: ask for
/// replacements (accepted ones are handled by the TaskExecutor's down
/// message).
void on_allocations_lost(self_ptr self, const std::vector<allocation_id>& lost) {
  auto& st = self->state;
  std::vector<slot_request> replacements;
  for (auto& a : lost) {
    auto i = st.pending_slots.find(a);
    if (i == st.pending_slots.end())
      continue;
    auto slot = i->second;
    st.pending_slots.erase(i);
    auto fresh = allocation_id::random();
    st.pending_slots.emplace(fresh, slot);
    replacements.push_back(slot_request{fresh, st.slot_profile});
  }
  if (replacements.empty() || st.state != job_state::running)
    return;
  self->request(st.rm, deploy_timeout, request_atom_v, st.leader,
                st.graph->graph().id, job_master_actor{self},
                std::move(replacements))
    .then([](int32_t) {},
          [=](caf::error& err) {
            fail_job(self, "slot request refused: " + describe(err));
          });
}

/// Every subtask has stopped and the restart delay passed: give the slots
/// back and schedule the job again with new attempts.
void restart(self_ptr self) {
  auto& st = self->state;
  auto job = st.graph->graph().id;
  std::set<caf::actor_addr> told;
  for (auto& te : st.executor_of_slot)
    if (te && told.insert(te.address()).second)
      self->send(te, free_atom_v, job);
  // Drop this job's pending requests of the last round (say, a replacement
  // for a slot lost before it was offered) before asking again.
  self->send(st.rm, disconnect_atom_v, job, st.leader);
  ++st.epoch;
  st.graph->restart();
  st.handles.assign(st.graph->size(), subtask_actor{});
  st.flat_by_addr.clear();
  st.deployed = 0;
  // Resume from the newest checkpoint when the sinks allow it: sources
  // rewind to its positions, operators get its state, collected records
  // are cut back to what it covered. Else start over from the sources.
  st.checkpoints->abort_pending();
  st.collected_at.clear();
  fail_requests(self, "the job restarts");
  auto* latest = st.resumable ? st.checkpoints->latest() : nullptr;
  st.restore_state = latest != nullptr;
  if (latest != nullptr) {
    for (auto& [flat, rows] : st.collected) {
      auto keep = st.committed_collected[flat];
      rows.resize(std::min(rows.size(), keep));
    }
    log_eventf("job {} ({}) resumes from checkpoint {}", job.to_string(),
               st.graph->graph().name, latest->id);
  } else {
    st.collected.clear();
  }
  st.pending_slots.clear();
  st.executor_of_slot.assign(st.executor_of_slot.size(), task_executor_actor{});
  st.executor_name_of_slot.assign(st.executor_of_slot.size(), std::string{});
  set_state(self, job_state::running);
  request_slots(self);
}

job_status make_status(self_ptr self, bool detailed) {
  auto& st = self->state;
  auto& g = *st.graph;
  job_status s;
  s.id = g.graph().id;
  s.name = g.graph().name;
  s.state = st.state;
  s.start_time_ms = st.start_time_ms;
  s.subtasks_total = static_cast<int32_t>(g.size());
  s.subtasks_running = g.count(execution_state::running);
  s.subtasks_finished = g.count(execution_state::finished);
  s.metrics = g.total_metrics();
  if (detailed) {
    for (auto& x : g.executions()) {
      auto& t = g.tasks()[static_cast<size_t>(x.task)];
      // Slot sharing: subtask k of every task runs in shared slot k.
      s.subtasks.push_back(subtask_status{
        t.name, x.subtask, t.parallelism, x.state,
        st.executor_name_of_slot[static_cast<size_t>(x.subtask)]});
    }
  }
  s.slot_profile = st.slot_profile;
  return s;
}

job_master_actor::behavior_type
job_master_impl(self_ptr self, job_graph graph, job_master_options opts,
                dispatcher_actor dispatcher, resource_manager_actor rm) {
  report_crashes(self);
  auto& st = self->state;
  st.opts = opts;
  st.graph = std::make_unique<execution_graph>(graph);
  st.dispatcher = std::move(dispatcher);
  st.rm = std::move(rm);
  st.start_time_ms = now_ms();
  st.handles.resize(st.graph->size());
  st.executor_of_slot.resize(static_cast<size_t>(st.graph->slots_needed()));
  st.executor_name_of_slot.resize(st.executor_of_slot.size());
  auto cfg = opts.config;
  cfg.apply(graph.config, "job config"); // checked at submission
  st.restarts = std::make_unique<restart_strategy>(
    restart_strategy_config::from(cfg));
  st.checkpoints = std::make_unique<checkpoint_coordinator>(
    checkpoint_options::from(cfg), static_cast<int32_t>(st.graph->size()));
  if (graph.priority == job_priority::driver) {
    // The driver's slot (-Dhm, -Ddm, -Dc, -Dnm of weir run -D).
    st.slot_profile.cpu_cores = cfg.number("driver.cpu-cores");
    st.slot_profile.heap_mb = cfg.memory_mb("driver.heap-memory");
    st.slot_profile.direct_mb = cfg.memory_mb("driver.direct-memory");
    st.slot_profile.native_mb = cfg.memory_mb("driver.native-memory");
  }
  st.backend.type = cfg.text("state.backend.type");
  st.backend.incremental = cfg.boolean("execution.checkpointing.incremental");
  if (!opts.checkpoint_dir.empty())
    st.backend.checkpoint_dir = opts.checkpoint_dir + "/" + graph.id.to_string();
  st.resumable = true;
  for (auto& v : graph.vertices) {
    bool sink = std::none_of(graph.edges.begin(), graph.edges.end(),
                             [&](const edge_spec& e) { return e.from == v.id; });
    auto exactly_once = v.op == "text_file" && v.params.count("delivery") > 0
                        && v.params.at("delivery") == "exactly-once";
    if (sink && v.op != "collect" && v.op != "discard" && !exactly_once)
      st.resumable = false;
  }
  st.resumable_from_storage = st.resumable;
  for (auto& v : graph.vertices)
    if (v.op == "collect")
      st.resumable_from_storage = false;
#ifdef WEIR_FAULT_INJECTION
  st.crashes_to_inject = cfg.integer("weir.fault.jobmaster-crashes");
#endif
  // Without its Dispatcher or ResourceManager the JobMaster is of no use:
  // it ends, its TaskExecutors free its slots (they watch it), and the
  // Dispatcher starts another one for the job.
  self->monitor(st.dispatcher);
  self->monitor(st.rm);
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    if (dm.source == st.dispatcher.address()
        || dm.source == st.rm.address()) {
      self->quit(make_error(errc::leader_lost,
                            dm.source == st.rm.address()
                              ? "the ResourceManager is gone"
                              : "the Dispatcher is gone"));
      return;
    }
    if (st.executors.count(dm.source) > 0) {
      on_executor_lost(self, dm.source, caf::to_string(dm.reason));
      return;
    }
    auto i = st.flat_by_addr.find(dm.source);
    if (i == st.flat_by_addr.end())
      return;
    auto flat = i->second;
    if (!is_terminal(st.graph->executions()[static_cast<size_t>(flat)].state)) {
      st.graph->transition(flat, execution_state::failed);
      on_task_failure(self, "subtask terminated unexpectedly: "
                              + caf::to_string(dm.reason));
      maybe_finalize(self);
    }
  });
  st.hb = heartbeat_monitor{opts.heartbeat};
  if (opts.heartbeat.interval.count() > 0)
    self->send(self, beat_atom_v);
  set_state(self, job_state::running);
  load_checkpoint_then_schedule(self);
  return {
    [=](offer_atom, const resource_id& from, std::vector<slot_offer>& offers) {
      return on_offer(self, from, offers);
    },
    [=](update_atom, execution_attempt_id attempt, execution_state s,
        const io_metrics& m, std::string& error) {
      on_update(self, attempt, s, m, error);
    },
    [=](metrics_atom, execution_attempt_id attempt, const io_metrics& m) {
      auto flat = self->state.graph->find(attempt);
      if (flat >= 0)
        self->state.graph->set_metrics(flat, m);
    },
    [=](collect_atom, execution_attempt_id attempt, record_batch& b) {
      if (self->state.graph->find(attempt) < 0)
        return; // from an attempt before a restart
      auto& out = self->state.collected[self->state.graph->find(attempt)];
      out.insert(out.end(), std::make_move_iterator(b.records.begin()),
                 std::make_move_iterator(b.records.end()));
    },
    [=](status_atom, bool detailed) { return make_status(self, detailed); },
    [=](collect_atom, int64_t offset) {
      std::vector<record> out;
      int64_t seen = 0;
      for (auto& [flat, rows] : self->state.collected)
        for (auto& r : rows)
          if (seen++ >= offset)
            out.push_back(r);
      return out;
    },
    [=](blob_atom a, std::string& hash) -> caf::result<std::string> {
      if (!self->state.opts.store)
        return make_error(errc::invalid_job, "this cluster has no blob store");
      return self->delegate(self->state.opts.store, a, std::move(hash));
    },
    [=](checkpoint_atom, execution_attempt_id attempt, int64_t id,
        operator_states& states) {
      on_checkpoint_ack(self, attempt, id, states);
    },
    [=](trigger_atom, uint64_t epoch) { trigger_checkpoint(self, epoch); },
    [=](checkpoint_atom, bool full) { return checkpoint_now(self, full); },
    [=](savepoint_atom, std::string& dir, bool stop) {
      return savepoint_now(self, std::move(dir), stop);
    },
    [=](cancel_atom) {
      auto& st = self->state;
      if (st.state == job_state::running || st.state == job_state::created
          || st.state == job_state::restarting) {
        set_state(self, job_state::cancelling);
        if (st.failure.empty())
          st.failure = "job was canceled";
        cancel_all(self);
      }
      return st.state;
    },
    [=](tick_atom, uint64_t epoch) {
      auto& st = self->state;
      if (epoch != st.epoch || st.pending_slots.empty()
          || st.state != job_state::running)
        return;
      fail_job(self,
               fmt::format("could not get {} of {} slots within "
                           "slot.request.timeout ({} ms)",
                           st.pending_slots.size(), st.graph->slots_needed(),
                           st.opts.slot_request_timeout.count()));
    },
    [=](free_atom, const std::vector<allocation_id>& allocs) {
      on_allocations_lost(self, allocs);
    },
    [=](heartbeat_atom) { return self->state.graph->graph().id; },
    [=](beat_atom) { send_heartbeats(self); },
    [=](restart_atom, uint64_t epoch) {
      if (epoch == self->state.epoch
          && self->state.state == job_state::restarting)
        restart(self);
    },
  };
}

} // namespace job_master_detail

job_master_actor spawn_job_master(caf::actor_system& sys, job_graph graph,
                                  job_master_options opts,
                                  dispatcher_actor dispatcher,
                                  resource_manager_actor rm) {
  return sys.spawn(job_master_detail::job_master_impl, std::move(graph), opts,
                   std::move(dispatcher), std::move(rm));
}

} // namespace weir
