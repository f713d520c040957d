#include "actors/resource_manager/resource_manager.hpp"

#include <map>
#include <set>

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include <fmt/format.h>

#include "actors/common/crash.hpp"
#include "actors/common/event_log.hpp"
#include "net/transport.hpp"
#include "actors/common/heartbeat_sender.hpp"
#include "net/log_limiter.hpp"
#include "actors/resource_manager/registrations.hpp"
#include "actors/resource_manager/slot_manager.hpp"
#include "messages/errors.hpp"

namespace weir {

namespace {

using namespace std::chrono_literals;

constexpr auto grant_timeout = 10s;

/// Slot requests of a JobMaster whose predecessor has not ended yet.
struct deferred_request {
  job_master_id leader;
  job_master_actor jm;
  std::vector<slot_request> requests;
  caf::typed_response_promise<int32_t> promise;
};

struct rm_state {
  resource_manager_id leader = resource_manager_id::random();
  std::unique_ptr<slot_manager> slots;
  registered_workers<task_executor_actor> workers;
  job_leaders<job_master_actor> jobs;
  std::map<allocation_id, job_id> job_of_alloc; // granted allocations
  heartbeat_monitor hb;
  /// Refused registrations are logged at most once a second.
  log_limiter refusals;
  std::map<job_id, std::vector<deferred_request>> deferred;
  /// Jobs a JobMaster asked slots for: slots that a TaskExecutor kept for
  /// one of their earlier JobMasters and reports when it registers are not
  /// adopted any more; they are freed (docs/state.md § Jobmanager failover
  /// without task restarts).
  std::set<job_id> scheduled_jobs;
  resource_manager_options opts;
  /// Active mode: which workers to start and stop, and who starts them.
  std::unique_ptr<worker_pool> pool;
  worker_launcher_actor launcher;
  /// Why the last worker the launcher started could not start (cleared
  /// once a TaskExecutor registers).
  std::string start_failure;
  static inline const char* name = "resource_manager";
};

using self_ptr = resource_manager_private_actor::stateful_pointer<rm_state>;

/// Tells each JobMaster whose requests stay unmet why, when that changed:
/// its client shows it while it waits and when it gives up.
void tell_unmet(self_ptr self) {
  auto& st = self->state;
  for (auto& [job, leader] : st.jobs.all()) {
    auto why = st.slots->why_unmet(job);
    if (!why.empty() && !st.start_failure.empty())
      why += "; starting a worker failed: " + st.start_failure;
    if (st.jobs.tell_unmet(job, why))
      self->send(leader.jm, unmet_atom_v, why);
  }
}

/// Matches pending requests and tells each TaskExecutor which of its slots
/// to offer to which JobMaster.
void assign_slots(self_ptr self) {
  auto& st = self->state;
  std::map<std::pair<resource_id, job_id>, std::vector<slot_grant>> grants;
  for (auto& a : st.slots->match()) {
    st.job_of_alloc[a.alloc] = a.job;
    grants[{a.task_executor, a.job}].push_back(slot_grant{a.alloc, a.slot_index});
  }
  for (auto& [key, list] : grants) {
    auto& [worker, job] = key;
    auto* w = st.workers.find(worker);
    auto* j = st.jobs.find(job);
    if (w == nullptr || j == nullptr) {
      for (auto& g : list)
        st.slots->free_slot(worker, g.alloc);
      continue;
    }
    self
      ->request(w->handle, grant_timeout, request_atom_v, st.leader, job,
                j->id, j->jm, list)
      .then([](int32_t) {},
            [=](caf::error&) {
              // The TaskExecutor refused or did not answer. The JobMaster
              // asks for replacements instead of waiting for offers that
              // never come; the slots stay booked (matching them again
              // could refuse again, in a loop) until the TaskExecutor
              // registers again or is lost.
              auto& st = self->state;
              std::vector<allocation_id> failed;
              for (auto& g : list) {
                st.job_of_alloc.erase(g.alloc);
                failed.push_back(g.alloc);
              }
              if (auto* l = st.jobs.find(job))
                self->send(l->jm, free_atom_v, std::move(failed));
            });
  }
  tell_unmet(self);
}

/// Active mode: starts the workers that pending requests need.
void start_workers(self_ptr self) {
  auto& st = self->state;
  if (!st.pool || !st.launcher)
    return;
  for (auto& o : st.pool->plan(st.slots->pending_profiles(),
                               self->clock().now())) {
    log_eventf("starting worker {} with {} slot(s) of {}", o.id.value, o.slots,
               to_string(o.slot_profile));
    self->send(st.launcher, start_atom_v, o.id, o.slots, o.slot_profile);
  }
}

/// Registers `jm` as the job's JobMaster and queues its slot requests;
/// returns the number of pending requests.
/// Frees the slots of `job` that TaskExecutors kept for an earlier
/// JobMaster: that job is scheduled afresh, their subtasks are canceled.
void free_kept(self_ptr self, const job_id& job) {
  auto& st = self->state;
  for (auto& id : st.slots->free_kept(job))
    if (auto* w = st.workers.find(id)) {
      log_eventf("TaskExecutor {} kept subtasks of job {}, which is "
                 "scheduled again; they are canceled",
                 id.value, job.to_string());
      self->send(w->handle, free_atom_v, job);
    }
}

int32_t register_requests(self_ptr self, job_master_id leader, job_id job,
                          job_master_actor jm,
                          const std::vector<slot_request>& requests) {
  auto& st = self->state;
  if (st.scheduled_jobs.insert(job).second)
    free_kept(self, job);
  if (st.jobs.lead(job, leader, jm)) {
    self->monitor(jm);
    st.hb.watch(jm.address(), self->clock().now());
  }
  st.slots->add_requests(job, requests);
  assign_slots(self);
  start_workers(self);
  return st.slots->pending_count();
}

/// The job's JobMaster ended: serve the requests of its successor.
void serve_deferred(self_ptr self, job_id job) {
  auto& st = self->state;
  auto i = st.deferred.find(job);
  if (i == st.deferred.end())
    return;
  auto waiting = std::move(i->second);
  st.deferred.erase(i);
  for (auto& d : waiting) {
    if (st.jobs.led_by_other(job, d.leader)) {
      st.deferred[job].push_back(std::move(d)); // still another one
      continue;
    }
    d.promise.deliver(register_requests(self, d.leader, job, d.jm, d.requests));
  }
}

/// A TaskExecutor or JobMaster ended or stopped sending heartbeats.
void on_peer_gone(self_ptr self, const caf::actor_addr& peer,
                  const std::string& reason) {
  auto& st = self->state;
  st.hb.unwatch(peer);
  if (auto ended = st.jobs.ended(peer); ended.job_master) {
    // A JobMaster ended (crashed, or done): drop its pending requests so
    // that the next JobMaster of the job is served. Its TaskExecutors
    // free its slots themselves.
    if (ended.led) {
      st.slots->remove_job(*ended.led);
      serve_deferred(self, *ended.led);
    }
    return;
  }
  // Only a current registration: an earlier one under the same id was
  // replaced, and the live one stays.
  auto id = st.workers.at(peer);
  if (!id)
    return;
  auto lost = st.slots->unregister_task_executor(*id);
  log_eventf("TaskExecutor {} lost ({}), {} allocated slots with it",
             id->value, reason, lost.size());
  // Tell each job's JobMaster (Flink's notifyAllocationFailure): a slot
  // granted but not yet offered would otherwise be waited for in vain.
  std::map<job_id, std::vector<allocation_id>> by_job;
  for (auto& a : lost) {
    if (auto j = st.job_of_alloc.find(a); j != st.job_of_alloc.end()) {
      by_job[j->second].push_back(a);
      st.job_of_alloc.erase(j);
    }
  }
  for (auto& [job, allocs] : by_job)
    if (auto* l = st.jobs.find(job))
      self->send(l->jm, free_atom_v, std::move(allocs));
  st.workers.remove(*id);
}

/// Forgets an idle worker that is about to be stopped, before its process
/// ends: a slot request arriving meanwhile must not be granted a slot of a
/// worker on its way out (its subtasks would die with it).
void retire_worker(self_ptr self, const resource_id& id) {
  auto& st = self->state;
  auto* w = st.workers.find(id);
  if (w == nullptr)
    return;
  st.slots->unregister_task_executor(id); // idle: it holds no allocation
  st.hb.unwatch(w->handle.address());
  st.workers.remove(id);
}

/// The refusal of a request about a TaskExecutor that is not registered.
caf::error not_registered(const resource_id& id) {
  return make_error(errc::invalid_request,
                    "TaskManager " + id.value + " is not registered");
}

/// Every registered TaskExecutor: slots, last heartbeat, host.
std::vector<task_manager_info> task_managers(self_ptr self) {
  auto& st = self->state;
  auto now = self->clock().now();
  auto wall = now_ms();
  std::vector<task_manager_info> out;
  for (auto& w : st.slots->task_executors()) {
    task_manager_info info;
    info.id = w.id;
    info.slots_total = w.total;
    info.slots_free = w.free;
    info.slots = w.slots;
    info.last_heartbeat_ms = wall;
    if (auto* te = st.workers.find(w.id)) {
      info.hardware = te->hardware;
      info.data = te->data;
      auto addr = te->handle.address();
      if (auto heard = st.hb.last_heard(addr))
        info.last_heartbeat_ms
          = wall
            - std::chrono::duration_cast<std::chrono::milliseconds>(now
                                                                    - *heard)
                .count();
      if (auto rtt = st.hb.round_trip(addr))
        info.heartbeat_rtt_us
          = std::chrono::duration_cast<std::chrono::microseconds>(*rtt)
              .count();
    }
    out.push_back(std::move(info));
  }
  return out;
}

/// Sends every TaskExecutor and JobMaster a heartbeat request and declares
/// lost whoever stayed silent too long or is known to be unreachable.
void send_heartbeats(self_ptr self) {
  auto& st = self->state;
  auto lost = [=](const caf::actor_addr& peer, const std::string& why) {
    on_peer_gone(self, peer, why);
  };
  for (auto& [id, te] : st.workers.all())
    request_heartbeat(self, st.hb, te.handle, lost);
  for (auto& [job, l] : st.jobs.all())
    request_heartbeat(self, st.hb, l.jm, lost);
  end_heartbeat_round(self, st.hb, lost);
}

resource_manager_private_actor::behavior_type
resource_manager_impl(self_ptr self, resource_manager_options opts) {
  report_crashes(self);
  auto& st = self->state;
  st.opts = opts;
  if (opts.active)
    st.pool = std::make_unique<worker_pool>(opts.pool);
  st.slots = std::make_unique<slot_manager>(opts.evenly_spread_out_slots);
  st.hb = heartbeat_monitor{opts.heartbeat};
  self->set_down_handler([=](caf::down_msg& dm) {
    on_peer_gone(self, dm.source, caf::to_string(dm.reason));
  });
  if (opts.heartbeat.interval.count() > 0)
    self->send(self, beat_atom_v);
  return {
    [=](register_atom, resource_id id, task_executor_actor te,
        slot_report& report) -> caf::result<resource_manager_id> {
      auto& st = self->state;
      if (auto sender = self->current_sender();
          sender && !net::may_act_as_node(self->system(), sender->node())) {
        // Rate-limited: a refused peer may come back at once.
        if (auto line = st.refusals.admit(fmt::format(
              "refused TaskExecutor {}: its certificate is not a node "
              "certificate (OU=weir-node)",
              id.value)))
          log_event(*line);
        return make_error(errc::registration_refused,
                          "a TaskExecutor needs a node certificate "
                          "(OU=weir-node, weir cert node); this one is not");
      }
      st.slots->register_task_executor(id, report);
      st.start_failure.clear(); // a worker came after all
      log_eventf("TaskExecutor {} registered with {} slots", id.value,
                 report.slots.size());
      self->monitor(te);
      st.hb.watch(te.address(), self->clock().now());
      st.workers.add(id, std::move(te), report.hardware, report.data);
      for (auto& s : report.slots)
        if (s.alloc.valid() && st.scheduled_jobs.count(s.job) > 0)
          free_kept(self, s.job);
      if (st.pool)
        st.pool->registered(id, self->clock().now());
      // Answer first: the TaskExecutor must know the leader's token before
      // the first slot request that carries it arrives.
      auto rp = self->make_response_promise<resource_manager_id>();
      rp.deliver(st.leader);
      assign_slots(self);
      return rp;
    },
    [=](request_atom, job_master_id leader, job_id job, job_master_actor jm,
        std::vector<slot_request>& requests) -> caf::result<int32_t> {
      auto& st = self->state;
      if (st.jobs.led_by_other(job, leader)) {
        if (st.jobs.find(job)->jm.address() == jm.address())
          return make_error(errc::fencing_token_mismatch,
                            fmt::format("job {} already has another JobMaster",
                                        job.to_string()));
        // Another JobMaster: the Dispatcher starts one only after the
        // previous one ended, whose end may still be on its way here. Its
        // requests wait for that end (and fail with slot.request.timeout
        // if the old one lives on).
        auto rp = self->make_response_promise<int32_t>();
        st.deferred[job].push_back(
          deferred_request{leader, std::move(jm), std::move(requests), rp});
        return rp;
      }
      return register_requests(self, leader, job, std::move(jm), requests);
    },
    [=](free_atom, const resource_id& id, std::vector<allocation_id>& allocs) {
      auto& st = self->state;
      for (auto& a : allocs) {
        st.slots->free_slot(id, a);
        st.job_of_alloc.erase(a);
      }
      assign_slots(self);
    },
    [=](disconnect_atom, job_id job, job_master_id leader) {
      auto& st = self->state;
      if (!st.jobs.disconnect(job, leader))
        return;
      st.slots->remove_job(job);
      serve_deferred(self, job);
    },
    [=](reconcile_atom, job_id job) {
      auto& st = self->state;
      std::vector<job_slot_holder> out;
      for (auto& [id, n] : st.slots->holders_of(job))
        if (auto* w = st.workers.find(id))
          out.push_back(job_slot_holder{id, w->handle, w->data, n});
      return out;
    },
    [=](beat_atom) { send_heartbeats(self); },
    [=](start_atom, std::string& address) {
      auto& st = self->state;
      if (!st.pool || st.launcher)
        return;
      auto cmd = st.opts.worker;
      cmd.jobmanager = std::move(address);
      st.launcher = st.opts.launcher(self->system(),
                                     resource_manager_actor{self}, cmd);
      self->link_to(st.launcher); // it stops its workers when this ends
      start_workers(self);
      self->send(self, tick_atom_v);
    },
    [=](exited_atom, const resource_id& id, std::string& why) {
      auto& st = self->state;
      if (st.pool)
        st.pool->exited(id, self->clock().now());
      if (!why.empty()) {
        st.start_failure = std::move(why);
        tell_unmet(self);
      }
      start_workers(self); // replaces a worker that failed to start
    },
    [=](tick_atom) {
      auto& st = self->state;
      if (!st.pool || !st.launcher)
        return; // not an active ResourceManager
      auto now = self->clock().now();
      // A worker a waiting job will take once its siblings come (Slurm may
      // start them later) is not idle.
      auto idle = st.pool->idle(
        [&](const resource_id& id) {
          return st.slots->is_idle(id) && !st.slots->serves_pending(id);
        },
        now);
      for (auto& id : idle) {
        log_eventf("stopping worker {}: idle for {} ms "
                   "(resourcemanager.taskmanager-timeout)",
                   id.value, st.opts.pool.idle_timeout.count());
        retire_worker(self, id);
        self->send(st.launcher, cancel_atom_v, id);
      }
      start_workers(self);
      self->send(st.launcher, tick_atom_v); // reap ended workers
      self->delayed_send(self, 100ms, tick_atom_v);
    },
    [=](overview_atom, job_id job, const std::vector<resource_id>& lost) {
      return self->state.slots->slots_for(job, lost);
    },
    [=](overview_atom) {
      auto& st = self->state;
      return cluster_overview{st.slots->task_executor_count(),
                              st.slots->slot_count(),
                              st.slots->free_slot_count(),
                              st.slots->pending_count()};
    },
    [=](list_atom) { return task_managers(self); },
    [=](log_atom a, const resource_id& id)
      -> caf::result<std::vector<log_file>> {
      auto* w = self->state.workers.find(id);
      if (w == nullptr)
        return not_registered(id);
      return self->delegate(w->handle, a);
    },
    [=](log_atom a, const resource_id& id, std::string& name,
        int64_t offset) -> caf::result<std::string> {
      auto* w = self->state.workers.find(id);
      if (w == nullptr)
        return not_registered(id);
      return self->delegate(w->handle, a, std::move(name), offset);
    },
  };
}

} // namespace

resource_manager_actor spawn_resource_manager(caf::actor_system& sys,
                                              resource_manager_options opts) {
  return sys.spawn(resource_manager_impl, opts);
}

} // namespace weir
