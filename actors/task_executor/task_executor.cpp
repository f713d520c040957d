#include "actors/task_executor/task_executor.hpp"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include <caf/actor_system.hpp>
#include <caf/send.hpp>
#include <caf/spawn_options.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <fmt/format.h>

#include "actors/common/crash.hpp"
#include "actors/common/event_log.hpp"
#include "actors/common/heartbeat_sender.hpp"
#include "actors/common/log_files.hpp"
#include "actors/common/process_stats.hpp"
#include "actors/task_executor/job_holders.hpp"
#include "actors/task_executor/slot_table.hpp"
#include "actors/task_executor/code_resolver.hpp"
#include "actors/task_executor/subtask.hpp"
#include "actors/task_executor/task_executor_state.hpp"
#include "actors/task_executor/task_metrics.hpp"
#include "messages/errors.hpp"
#include "messages/file_names.hpp"

namespace weir {

namespace {

using namespace std::chrono_literals;

/// A JobMaster answers a slot offer within this time, or the slots go back.
constexpr auto offer_timeout = 10s;
/// The ResourceManager answers a registration within this time.
constexpr auto registration_timeout = 10s;


using self_ptr = task_executor_private_actor::stateful_pointer<te_state>;

/// Shows the slots to the process's metrics endpoint (if any).
void publish_slots(self_ptr self) {
  auto& st = self->state;
  if (st.opts.metrics)
    st.opts.metrics->set_slots(st.slots->size(), st.slots->free_count());
}

/// What it registers with: its slots and its host.
slot_report registration(self_ptr self) {
  auto& st = self->state;
  auto report = st.slots->report();
  report.hardware = describe_hardware(st.opts.slot_profile.native_mb
                                      * st.opts.slots * (int64_t{1} << 20));
  report.data = st.opts.data_port;
  return report;
}

/// Cancels every subtask of `job` running here.
void cancel_subtasks(self_ptr self, job_id job) {
  for (auto& h : self->state.subtasks.of(job))
    self->send(h, cancel_atom_v);
}

/// Cancels every subtask running here.
void cancel_all_subtasks(self_ptr self) {
  for (auto& h : self->state.subtasks.all())
    self->send(h, cancel_atom_v);
}

/// Whether a subtask still runs in `alloc`.
bool runs_in(const te_state& st, const allocation_id& alloc) {
  bool found = false;
  st.subtasks.each([&](auto&, const running_attempt& a) {
    found = found || a.alloc == alloc;
  });
  return found;
}

/// Gives slots back: at once those no subtask runs in, the others once
/// their last subtask has ended (they stay RELEASING until then: a slot
/// never holds two jobs' subtasks, slot_table.hpp).
void give_back(self_ptr self, std::vector<allocation_id> allocs) {
  auto& st = self->state;
  std::vector<allocation_id> freed;
  for (auto& a : allocs) {
    if (runs_in(st, a)) {
      st.slots->release_later(a);
      continue;
    }
    if (!st.slots->free(a))
      continue;
    st.buffers->release(a);
    freed.push_back(a);
  }
  publish_slots(self);
  // Without a ResourceManager (lost), the next one hears of the slots when
  // this registers with it.
  if (!freed.empty() && st.rm)
    self->send(st.rm, free_atom_v, st.opts.id, std::move(freed));
}

/// An error unless every deployment's slot is held by JobMaster `leader`.
caf::error check_fencing(self_ptr self, job_master_id leader,
                         const std::vector<task_deployment>& deployments) {
  for (auto& d : deployments)
    if (!self->state.slots->owned_by(d.alloc, d.job, leader))
      return make_error(errc::fencing_token_mismatch,
                        fmt::format("allocation {} is not held by this "
                                    "JobMaster",
                                    d.alloc.to_string()));
  return caf::none;
}

/// An error (logged once) unless every vertex id of `deployments` is a file
/// name: they name the subtasks' state directories and checkpoint files.
caf::error check_vertex_ids(self_ptr self,
                            const std::vector<task_deployment>& deployments) {
  for (auto& d : deployments)
    for (auto& v : d.chain)
      if (auto err = check_file_name("vertex id", v.id)) {
        auto what = fmt::format("TaskExecutor {} refuses the deployment: {}",
                                self->state.opts.id.value, describe(err));
        log_event(what);
        return make_error(errc::invalid_job, std::move(what));
      }
  return caf::none;
}

/// Reserves the network buffers of `deployments` before anything of them is
/// spawned, or refuses them all.
caf::error reserve_buffers(self_ptr self,
                           const std::vector<task_deployment>& deployments) {
  auto& st = self->state;
  auto& opts = st.opts.network;
  std::map<allocation_id, int64_t> by_alloc;
  int64_t need = 0;
  for (auto& d : deployments) {
    auto n = buffers_needed(d, opts);
    by_alloc[d.alloc] += n;
    need += n;
  }
  if (need > st.buffers->available())
    return make_error(
      errc::insufficient_network_buffers,
      fmt::format("insufficient network buffers: needs {}, has {} "
                  "(TaskExecutor {}: taskmanager.memory.network.max {} MiB "
                  "in buffers of {} KiB, {} reserved; raise it to at least "
                  "{} MiB)",
                  need, st.buffers->available(), st.opts.id.value,
                  opts.max_bytes >> 20, opts.buffer_bytes >> 10,
                  st.buffers->total() - st.buffers->available(),
                  ((need + st.buffers->total() - st.buffers->available())
                     * opts.buffer_bytes + (1 << 20) - 1)
                    >> 20));
  for (auto& [alloc, n] : by_alloc)
    st.buffers->reserve(alloc, n);
  return caf::none;
}

/// Spawns the subtasks of `deployments` with the job's user code at
/// `code`.
caf::expected<std::vector<subtask_actor>>
start_subtasks(self_ptr self, const job_master_actor& jm,
               std::vector<task_deployment>& deployments,
               const local_code& code) {
  auto& st = self->state;
  if (auto err = reserve_buffers(self, deployments))
    return err;
  std::vector<subtask_actor> spawned;
  spawned.reserve(deployments.size());
  try {
    for (auto& d : deployments) {
      auto job = d.job;
      subtask_env env;
      env.system = &self->system();
      env.exchange = st.opts.network.credits(st.opts.exchange);
      env.local_state_dir = st.opts.local_state_dir;
      env.code = code;
      env.dispatcher = st.opts.dispatcher;
      env.job_master = jm;
      env.metrics = st.opts.metrics;
      env.data = st.opts.data;
      env.data_port = st.opts.data_port;
      env.registry = st.opts.registry;
      running_attempt ra;
      ra.attempt = d.attempt;
      ra.attempt_number = d.attempt_number;
      ra.task_index = d.task_index;
      ra.subtask_index = d.subtask_index;
      ra.parallelism = d.parallelism;
      ra.head = d.chain.empty() ? std::string{} : d.chain.front().id;
      ra.alloc = d.alloc;
      auto h = spawn_subtask(std::move(d), jm, env);
      self->monitor(h);
      ra.handle = h;
      st.subtasks.add(job, h, std::move(ra));
      spawned.push_back(std::move(h));
    }
  } catch (const std::exception& e) {
    // For instance no thread left for another detached subtask.
    for (auto& h : spawned)
      self->send(h, cancel_atom_v);
    return make_error(errc::operator_failure,
                      fmt::format("TaskExecutor {} could not start a "
                                  "subtask: {}",
                                  st.opts.id.value, e.what()));
  }
  return spawned;
}

void offer(self_ptr self, job_master_actor jm, std::vector<slot_offer> offers) {
  self->request(jm, offer_timeout, offer_atom_v, self->state.opts.id, offers)
    .then(
      [=](std::vector<allocation_id>& accepted) {
        std::set<allocation_id> ok(accepted.begin(), accepted.end());
        std::vector<allocation_id> rejected;
        for (auto& o : offers) {
          if (ok.count(o.alloc) > 0)
            self->state.slots->activate(o.alloc);
          else
            rejected.push_back(o.alloc);
        }
        give_back(self, std::move(rejected));
      },
      [=](caf::error&) {
        std::vector<allocation_id> all;
        for (auto& o : offers)
          all.push_back(o.alloc);
        give_back(self, std::move(all));
      });
}

/// Cancels the subtasks of `job` and frees its slots held under `leader`. A
/// job's subtasks all belong to its newest JobMaster: a newer one deploys
/// only after its predecessor is gone.
void on_job_master_lost(self_ptr self, job_id job, job_master_id leader) {
  auto& st = self->state;
  if (st.opts.keep_tasks.count() > 0 && st.slots->holds(job, leader)) {
    // A successor may adopt them (docs/state.md § Jobmanager failover
    // without task restarts); they run on meanwhile, but none ends.
    for (auto& h : st.subtasks.of(job))
      detach_subtask(h);
    self->delayed_send(self, st.opts.keep_tasks, lost_atom_v, job, leader);
    return;
  }
  auto freed = st.slots->free_leader(job, leader);
  if (!st.job_masters.newer_than(job, leader))
    cancel_subtasks(self, job);
  give_back(self, std::move(freed));
}

/// Cancels the subtasks running in allocations `allocs`.
void cancel_in(self_ptr self, const std::vector<allocation_id>& allocs) {
  self->state.subtasks.each([&](auto& h, const running_attempt& a) {
    if (std::find(allocs.begin(), allocs.end(), a.alloc) != allocs.end())
      self->send(h, cancel_atom_v);
  });
}

/// The keep-tasks timeout of `job`'s lost JobMaster `leader` passed: its
/// subtasks that no successor adopted are canceled.
void on_keep_timeout(self_ptr self, job_id job, job_master_id leader) {
  auto& st = self->state;
  auto freed = st.slots->free_leader(job, leader);
  if (freed.empty())
    return;
  log_eventf("no JobMaster adopted the subtasks of job {} within {} ms "
             "(taskmanager.failover.keep-tasks-timeout); canceling them",
             job.to_string(), st.opts.keep_tasks.count());
  cancel_in(self, freed);
  give_back(self, std::move(freed));
}

/// Sends the registration to the ResourceManager in `st.rm`.
void register_with_rm(self_ptr self);

/// The ResourceManager is gone (or silent). Without subtasks to keep, stop
/// everything: whoever runs this TaskExecutor registers a new one when a
/// master is back. Else the subtasks run on, each job's for the keep-tasks
/// timeout, and the owner connects this TaskExecutor to the next master.
void on_resource_manager_lost(self_ptr self, caf::error reason) {
  auto& st = self->state;
  if (st.opts.keep_tasks.count() <= 0 || !st.opts.owner
      || st.subtasks.size() == 0) {
    cancel_all_subtasks(self);
    self->quit(std::move(reason));
    return;
  }
  st.hb.unwatch(st.rm.address());
  self->demonitor(st.rm.address());
  st.rm = nullptr;
  st.rm_leader = resource_manager_id{};
  // JobMasters stay watched: those of a lost jobmanager are lost by their
  // own down messages or heartbeats (and their subtasks kept); one that
  // lives on (only its ResourceManager restarted) keeps its subtasks.
  log_eventf("keeping {} subtasks running for up to {} ms for the next "
             "jobmanager to adopt (taskmanager.failover.keep-tasks-timeout)",
             st.subtasks.size(), st.opts.keep_tasks.count());
  // The owner is dynamically typed (a blocking loop's scoped actor).
  caf::anon_send(st.opts.owner, lost_atom_v, describe(reason));
}

/// Drops whoever stopped sending heartbeats: the ResourceManager ends this
/// TaskExecutor, a JobMaster loses its slots here.
void check_heartbeats(self_ptr self) {
  bool ended = false;
  end_heartbeat_round(self, self->state.hb, [&](const caf::actor_addr& peer,
                                                const std::string& silent) {
    auto& st = self->state;
    if (ended)
      return;
    if (peer == st.rm.address()) {
      log_eventf("the ResourceManager is lost ({})", silent);
      on_resource_manager_lost(self,
                               make_error(errc::leader_lost,
                                          "ResourceManager lost: " + silent));
      ended = true;
      return;
    }
    if (auto held = st.job_masters.gone(peer)) {
      log_eventf("the JobMaster of job {} is lost ({})",
                 held->job.to_string(), silent);
      on_job_master_lost(self, held->job, held->leader);
    }
  });
}

void register_with_rm(self_ptr self) {
  auto& st = self->state;
  self->monitor(st.rm);
  if (st.opts.heartbeat.interval.count() > 0)
    st.hb.watch(st.rm.address(), self->clock().now());
  auto rm = st.rm;
  self->request(st.rm, registration_timeout, register_atom_v, st.opts.id,
                task_executor_actor{self}, registration(self))
    .then(
      [=](resource_manager_id leader) {
        if (self->state.rm == rm)
          self->state.rm_leader = leader;
      },
      [=](caf::error& err) {
        log_problemf("weir: TaskExecutor {} could not register: {}",
                     self->state.opts.id.value, describe(err));
        if (self->state.rm == rm)
          on_resource_manager_lost(self, err);
      });
}

/// A JobMaster that took over `job` as `leader` holds the job's slots here
/// from now on.
int32_t on_adopt(self_ptr self, job_id job, job_master_id leader,
                 job_master_actor jm) {
  auto& st = self->state;
  auto n = st.slots->reown(job, leader);
  if (n > 0 && st.job_masters.hold(jm.address(), job, leader)) {
    self->monitor(jm);
    if (st.opts.heartbeat.interval.count() > 0)
      st.hb.watch(jm.address(), self->clock().now());
  }
  return n;
}

task_executor_private_actor::behavior_type
task_executor_impl(self_ptr self, task_executor_options opts,
                   resource_manager_actor rm) {
  report_crashes(self);
  auto& st = self->state;
  st.opts = std::move(opts);
  st.rm = std::move(rm);
  st.slots = std::make_unique<slot_table>(st.opts.slots, st.opts.slot_profile);
  st.buffers
    = std::make_unique<network_buffer_pool>(st.opts.network.total_buffers());
  auto cache = st.opts.local_state_dir.empty()
                 ? std::filesystem::temp_directory_path().string() + "/weir-blobs"
                 : st.opts.local_state_dir + "/blobs";
  st.resolver = spawn_code_resolver(self->system(), cache, st.opts.id.value,
                                    st.opts.helper_threads);
  self->link_to(st.resolver); // it ends with this TaskExecutor
  self->set_down_handler([=](caf::down_msg& dm) {
    auto& st = self->state;
    if (dm.source == st.rm.address()) {
      on_resource_manager_lost(self, dm.reason);
      return;
    }
    st.hb.unwatch(dm.source);
    if (auto held = st.job_masters.gone(dm.source)) {
      on_job_master_lost(self, held->job, held->leader);
      return;
    }
    std::optional<allocation_id> alloc;
    if (auto* info = st.subtasks.info(dm.source))
      alloc = info->alloc;
    st.subtasks.ended(dm.source);
    // The last subtask of a released slot ended: now it is free.
    if (alloc && st.slots->releasing(*alloc) && !runs_in(st, *alloc))
      give_back(self, {*alloc});
  });
  // Going down cancels every subtask it runs.
  self->set_exit_handler([=](caf::exit_msg& msg) {
    cancel_all_subtasks(self);
    self->quit(msg.reason);
  });
  publish_slots(self);
  st.hb = heartbeat_monitor{st.opts.heartbeat};
  if (st.opts.heartbeat.interval.count() > 0)
    self->send(self, beat_atom_v);
  register_with_rm(self);
  return {
    [=](request_atom, resource_manager_id leader, job_id job,
        job_master_id jm_leader, job_master_actor jm,
        std::vector<slot_grant>& grants) -> caf::result<int32_t> {
      auto& st = self->state;
      if (leader != st.rm_leader)
        return make_error(errc::fencing_token_mismatch,
                          "slot request from a replaced ResourceManager");
      std::vector<slot_offer> offers;
      for (auto& g : grants) {
        auto problem = st.slots->allocate(g.slot_index, g.alloc, job, jm_leader);
        if (!problem.empty())
          continue;
        offers.push_back(
          slot_offer{g.alloc, g.slot_index, st.slots->profile(g.slot_index),
                     st.opts.data_port});
      }
      auto n = static_cast<int32_t>(offers.size());
      publish_slots(self);
      if (!offers.empty()
          && st.job_masters.hold(jm.address(), job, jm_leader)) {
        self->monitor(jm);
        if (st.opts.heartbeat.interval.count() > 0)
          st.hb.watch(jm.address(), self->clock().now());
      }
      if (!offers.empty())
        offer(self, std::move(jm), std::move(offers));
      return n;
    },
    [=](submit_atom, job_master_id leader, job_master_actor jm,
        std::vector<task_deployment>& deployments)
      -> caf::result<std::vector<subtask_actor>> {
      if (auto err = check_fencing(self, leader, deployments))
        return err;
      if (auto err = check_vertex_ids(self, deployments))
        return err;
      // One job per submission: its user code is resolved once.
      if (deployments.empty() || deployments.front().code.empty())
        return start_subtasks(self, jm, deployments, local_code{});
      auto rp = self->make_response_promise<std::vector<subtask_actor>>();
      auto code = deployments.front().code;
      self->request(self->state.resolver, caf::infinite, blob_atom_v, code, jm)
        .then(
          [=, ds = std::move(deployments)](local_code& local) mutable {
            // The slots may have been freed while the code was fetched.
            if (auto err = check_fencing(self, leader, ds)) {
              rp.deliver(err);
              return;
            }
            auto started = start_subtasks(self, jm, ds, local);
            if (started)
              rp.deliver(std::move(*started));
            else
              rp.deliver(started.error());
          },
          [=](caf::error& err) mutable { rp.deliver(err); });
      return rp;
    },
    [=](heartbeat_atom) {
      auto& st = self->state;
      st.hb.heard_from(caf::actor_cast<caf::actor_addr>(self->current_sender()),
                       self->clock().now());
      return st.opts.id;
    },
    [=](beat_atom) { check_heartbeats(self); },
    // A log piece is one bounded read of a local file, and a cluster's
    // TaskExecutor has its own thread (own_thread), so no scheduler
    // thread waits on it.
    [=](log_atom) { return log_files(); },
    [=](log_atom, const std::string& name,
        int64_t offset) -> caf::result<std::string> {
      auto piece = read_log_piece(name, offset);
      if (!piece)
        return std::move(piece.error());
      return std::move(*piece);
    },
    [=](free_atom, job_id job) {
      cancel_subtasks(self, job);
      give_back(self, self->state.slots->free_job(job));
    },
    [=](reconcile_atom, job_id job) {
      return self->state.subtasks.info_of(job);
    },
    [=](adopt_atom, job_id job, job_master_id leader, job_master_actor& jm) {
      return on_adopt(self, job, leader, std::move(jm));
    },
    [=](lost_atom, job_id job, job_master_id leader) {
      on_keep_timeout(self, job, leader);
    },
    [=](connect_atom, dispatcher_actor& dispatcher, resource_manager_actor& rm) {
      auto& st = self->state;
      st.opts.dispatcher = std::move(dispatcher);
      st.rm = std::move(rm);
      register_with_rm(self);
    },
  };
}

} // namespace

task_executor_actor spawn_task_executor(caf::actor_system& sys,
                                        task_executor_options opts,
                                        resource_manager_actor rm) {
  if (opts.own_thread)
    return sys.spawn<caf::detached>(task_executor_impl, std::move(opts),
                                    std::move(rm));
  return sys.spawn(task_executor_impl, std::move(opts), std::move(rm));
}

} // namespace weir
