#include "sim/checks.hpp"

#include <caf/mailbox_element.hpp>
#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scheduled_actor.hpp>
#include <caf/send.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "actors/job_master/job_master_state.hpp"
#include "actors/task_executor/task_executor_state.hpp"
#include "messages/atoms.hpp"
#include "messages/deployment.hpp"
#include "messages/slots.hpp"
#include "messages/subtask.hpp"

namespace weir::sim {

checks::~checks() {
  if (watcher_) // the world's end runs its exit
    caf::anon_send_exit(watcher_, caf::exit_reason::kill);
}

void checks::finished(const job_id& job) {
  finished_.emplace(job, world_.now());
}

void checks::broke(std::string what) {
  if (broken_.size() < 5)
    broken_.push_back(fmt::format("at {} ms: {}", ms(world_.elapsed()),
                                  std::move(what)));
}

void checks::before(const delivery& d) {
  if (d.receiver_host < 0
      || world_.host_at(d.receiver_host).state != world::host::life::up)
    return;
  auto& xs = d.message->content();
  // A jobmanager that lost the leadership may still run for a moment (its
  // watchdog ends it within 20 ms of running again) and even deploy, but
  // nothing it does may take effect: no sink commits for it.
  if (d.sender_host >= 0 && world_.host_at(d.sender_host).fenced
      && xs.match_elements<commit_atom, int64_t>())
    broke(fmt::format("a subtask commits checkpoint {} for a JobMaster on {}, "
                      "whose jobmanager lost the leadership",
                      xs.get_as<int64_t>(1),
                      world_.host_at(d.sender_host).name));
  // A finished job's subtask starts (its JobMaster sends the wiring once
  // the round is deployed). A deployment that comes late, after its
  // JobMaster ended (a worker that was frozen), spawns subtasks that
  // never start and are canceled when the worker learns of the end.
  if (named(d.receiver, "subtask")
      && xs.match_elements<start_atom, subtask_wiring>()) {
    auto i = subtask_job_.find(d.receiver->id());
    if (i != subtask_job_.end() && is_finished(i->second))
      broke(fmt::format("job {} finished, yet its subtask #{} starts again "
                        "on {}",
                        i->second.to_string(), d.receiver->id(),
                        world_.host_at(d.receiver_host).name));
    return;
  }
  if (named(d.receiver, "task_executor")
      && xs.match_elements<request_atom, resource_manager_id, job_id,
                           job_master_id, job_master_actor,
                           std::vector<slot_grant>>()) {
    auto& slots = slot_of_[d.receiver->id()];
    for (auto& g : xs.get_as<std::vector<slot_grant>>(5))
      slots[g.alloc] = g.slot_index;
  }
}

void checks::after(caf::scheduled_actor* a, int host) {
  if (host < 0 || world_.host_at(host).state == world::host::life::crashed)
    return;
  if (named(a, "task_executor"))
    check_task_executor(a, host);
  else if (named(a, "job_master"))
    check_job_master(a, host);
}

void checks::check_task_executor(caf::scheduled_actor* a, int host) {
  using te_actor = task_executor_private_actor::stateful_base<te_state>;
  auto* te = dynamic_cast<te_actor*>(a);
  if (te == nullptr || !te->state.slots)
    return;
  auto& st = te->state;
  auto& slots = slot_of_[a->id()];
  // The jobs whose subtasks run in each slot.
  std::map<int32_t, std::set<job_id>> jobs_in;
  st.subtasks.each_with_job(
    [&](const job_id& job, const subtask_actor& h, const running_attempt& r) {
      subtask_job_[h.id()] = job;
      if (auto i = slots.find(r.alloc); i != slots.end())
        jobs_in[i->second].insert(job);
    });
  for (auto& [index, jobs] : jobs_in)
    if (jobs.size() > 1) {
      std::string names;
      for (auto& j : jobs)
        names += (names.empty() ? "" : " and ") + j.to_string();
      broke(fmt::format("slot {} of {} holds subtasks of two jobs: {}", index,
                        world_.host_at(host).name, names));
    }
}

void checks::check_job_master(caf::scheduled_actor* a, int host) {
  using namespace job_master_detail;
  using jm_actor = job_master_self_actor::stateful_base<jm_state>;
  if (job_masters_->count(a->id()))
    return;
  auto* jm = dynamic_cast<jm_actor*>(a);
  if (jm == nullptr || !jm->state.scheduler)
    return;
  auto job = jm->state.scheduler->graph().graph().id;
  job_masters_->emplace(a->id(), jm_entry{job, host});
  // Its end leaves the table: a watcher monitors it.
  if (!watcher_) {
    std::weak_ptr<std::map<caf::actor_id, jm_entry>> table = job_masters_;
    watcher_ = a->home_system().spawn([table](caf::event_based_actor* self) {
      self->set_down_handler([table](caf::down_msg& dm) {
        if (auto t = table.lock())
          t->erase(dm.source.id());
      });
      return caf::behavior{
        [self](caf::actor& x) { self->monitor(x); },
      };
    });
  }
  caf::anon_send(watcher_, caf::actor_cast<caf::actor>(a->ctrl()));
  auto id = a->id();
  // A JobMaster of a crashed process does not act, nor one whose
  // jobmanager lost the leadership (fenced: its deployments are checked
  // above); any other live one does.
  std::vector<std::string> acting;
  for (auto& [other, e] : *job_masters_)
    if (e.job == job && !world_.host_at(e.host).fenced
        && world_.host_at(e.host).state != world::host::life::crashed)
      acting.push_back(fmt::format("#{} on {}", other,
                                   world_.host_at(e.host).name));
  if (acting.size() > 1)
    broke(fmt::format("{} JobMasters act for job {} at once: {}",
                      acting.size(), job.to_string(), fmt::join(acting, ", ")));
  if (is_finished(job))
    broke(fmt::format("job {} finished, yet a JobMaster (#{}) starts for it",
                      job.to_string(), id));
}

} // namespace weir::sim
