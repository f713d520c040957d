#include "actors/dispatcher/job_table.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "actors/job_master/collected_results.hpp"
#include "plan/chaining.hpp"
#include "storage/job_graph_store.hpp"

namespace weir {

job_table::job_table(supervision_options per_job) : per_job_(per_job) {
}

job_entry* job_table::find(const job_id& id) {
  auto i = jobs_.find(id);
  return i == jobs_.end() ? nullptr : &i->second;
}

std::optional<bool> job_table::same_as_known(const job_graph& g) const {
  auto i = jobs_.find(g.id);
  if (i == jobs_.end())
    return std::nullopt;
  // A job known only by its stored result (its graph is cleaned up) is
  // compared by the graph's fingerprint, by name for older results.
  auto& known = i->second;
  if (!known.graph.vertices.empty())
    return known.graph == g;
  if (known.result && known.result->graph_fingerprint != 0)
    return known.result->graph_fingerprint
           == storage::job_graph_fingerprint(g);
  return known.result && known.result->name == g.name;
}

job_entry& job_table::add(job_graph g, int64_t now_ms) {
  auto& e = jobs_[g.id];
  e.graph = std::move(g);
  e.submitted_ms = now_ms;
  e.crashes = restart_intensity{per_job_};
  return e;
}

void job_table::erase(const job_id& id) {
  jobs_.erase(id);
}

std::vector<job_id> job_table::recover(const recovered_jobs& rec,
                                       int64_t now_ms) {
  for (auto& r : rec.results)
    jobs_[r.id].result = r;
  std::vector<job_id> to_run;
  for (auto& g : rec.graphs) {
    if (jobs_.count(g.id) > 0)
      continue; // finished before: never run twice
    add(g, now_ms).recovered = true;
    to_run.push_back(g.id);
  }
  return to_run;
}

void job_table::started(job_entry& e, job_master_actor jm,
                        caf::actor_addr rm) {
  e.awaiting_rm = false;
  e.restart_pending = false;
  e.rm_of_jm = std::move(rm);
  job_by_jm_[jm.address()] = e.graph.id;
  e.jm = std::move(jm);
  e.live.reset();
}

void job_table::reported(const caf::actor_addr& jm, job_status s) {
  auto i = job_by_jm_.find(jm);
  if (i == job_by_jm_.end())
    return;
  auto& e = jobs_[i->second];
  if (e.ending() || e.jm.address() != jm)
    return;
  s.subtasks.clear();
  e.live = std::move(s);
}

job_status job_table::status_of(const job_id& id, const job_entry& e) {
  auto s = current_status(id, e);
  s.recovered = e.recovered;
  return s;
}

job_status job_table::current_status(const job_id& id, const job_entry& e) {
  if (auto* r = e.ended_with()) {
    auto s = status_of(*r);
    // Its tasks (operator chains times their parallelism), as it ran them,
    // while the graph is still at hand.
    if (!e.graph.vertices.empty())
      for (auto& chain : compute_chains(e.graph))
        s.subtasks_total
          += e.graph.vertices[static_cast<size_t>(chain.front())].parallelism;
    return s;
  }
  if (e.live)
    return *e.live;
  job_status s;
  s.id = id;
  s.name = e.graph.name;
  s.state = e.cancel_requested ? job_state::cancelling
            : e.restart_pending ? job_state::restarting
                                : job_state::created;
  s.start_time_ms = e.submitted_ms;
  return s;
}

job_table::end_decision
job_table::job_master_ended(const caf::actor_addr& jm, bool leader_lost,
                            const caf::actor_addr& rm) {
  auto i = job_by_jm_.find(jm);
  if (i == job_by_jm_.end())
    return {};
  auto id = i->second;
  job_by_jm_.erase(i);
  auto& e = jobs_[id];
  if (e.ending())
    return {};
  e.jm = nullptr;
  e.live.reset();
  if (!leader_lost)
    return {job_master_end::crashed, id};
  if (e.rm_of_jm != rm)
    return {job_master_end::restart, id};
  e.awaiting_rm = true;
  return {job_master_end::await_resource_manager, id};
}

job_table::crash_decision
job_table::job_master_crashed(const job_id& id,
                              restart_intensity::clock::time_point now,
                              const std::string& reason, int64_t now_ms) {
  auto& e = jobs_[id];
  crash_decision d;
  d.limit = e.crashes.describe();
  if (e.crashes.on_crash(now)) {
    e.restart_pending = true;
    d.restart = true;
    d.delay = e.crashes.backoff();
    d.restarts = e.crashes.recent();
    return d;
  }
  // The crashes within the window: every restart it allowed, and this one.
  auto crashed = e.crashes.recent() + 1;
  auto& r = d.failure;
  r.id = id;
  r.name = e.graph.name;
  r.state = job_state::failed;
  r.error = fmt::format("its JobMaster crashed {} time{} within {} ms "
                        "(last: {})",
                        crashed, crashed == 1 ? "" : "s",
                        e.crashes.within().count(), reason);
  r.start_time_ms = e.submitted_ms;
  r.end_time_ms = now_ms;
  return d;
}

job_entry* job_table::restart_due(const job_id& id, int32_t incarnation) {
  auto* e = find(id);
  if (e == nullptr || e->ending() || !e->restart_pending || e->jm
      || e->incarnation != incarnation)
    return nullptr;
  e->restart_pending = false;
  return e;
}

std::vector<job_id> job_table::awaiting_resource_manager() const {
  std::vector<job_id> result;
  for (auto& [id, e] : jobs_)
    if (e.awaiting_rm && !e.ending())
      result.push_back(id);
  return result;
}

job_entry* job_table::begin_completion(job_result r) {
  auto* e = find(r.id);
  if (e == nullptr || e->ending())
    return nullptr;
  e->completing = std::move(r);
  e->jm = nullptr;
  if (e->live) {
    e->checkpoints = std::move(e->live->checkpoints);
    e->exceptions = std::move(e->live->exceptions);
  }
  e->live.reset();
  return e;
}

job_entry& job_table::completed(const job_id& id, const std::string& problem) {
  auto& e = jobs_[id];
  e.result = std::move(e.completing);
  e.completing.reset();
  if (!problem.empty())
    e.result->error += (e.result->error.empty() ? "" : "; ") + problem;
  for (auto& [client, p] : e.waiting)
    p.deliver(*e.result);
  e.waiting.clear();
  return e;
}

std::vector<job_status> job_table::list() const {
  std::vector<job_status> result;
  for (auto& [id, e] : jobs_)
    result.push_back(status_of(id, e));
  return result;
}

std::vector<job_master_actor> job_table::job_masters() const {
  std::vector<job_master_actor> result;
  for (auto& [id, e] : jobs_)
    if (e.jm)
      result.push_back(e.jm);
  return result;
}

job_status job_table::status_of(const job_result& r) {
  job_status s;
  s.id = r.id;
  s.name = r.name;
  s.state = r.state;
  s.start_time_ms = r.start_time_ms;
  s.end_time_ms = r.end_time_ms;
  s.error = r.error;
  s.metrics = r.metrics;
  return s;
}

std::vector<collected_table> job_table::collected_from(const job_result& r,
                                                       int64_t offset,
                                                       size_t max_bytes) {
  return rows_from(r.collected, offset, max_bytes);
}

job_result job_table::canceled_before_start(const job_id& id,
                                            const std::string& name,
                                            int64_t now_ms) {
  job_result r;
  r.id = id;
  r.name = name;
  r.state = job_state::canceled;
  r.error = "job was canceled";
  r.start_time_ms = r.end_time_ms = now_ms;
  return r;
}

job_result job_table::failed_before_start(const job_id& id,
                                          const std::string& name,
                                          std::string error, int64_t now_ms) {
  auto r = canceled_before_start(id, name, now_ms);
  r.state = job_state::failed;
  r.error = std::move(error);
  return r;
}

} // namespace weir
