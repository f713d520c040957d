#pragma once

// Where the JobMaster's current round stands and what it does next: the
// execution graph (every subtask's attempt and state), which slot runs
// which subtask, the round's slot request, which subtasks an accepted slot
// deploys (with what state to restore), the deployed subtasks, and whom
// each sends to once the round starts. The JobMaster's actor only sends
// what it decides; a restart starts a new round. Flink's SchedulerNG, as a
// plain class: templated on the actor handles, so unit tests use
// stand-ins.

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "actors/job_master/deployed_subtasks.hpp"
#include "actors/job_master/execution_graph.hpp"
#include "actors/job_master/slot_assignment.hpp"

namespace weir {

/// The subtasks of shared slots just accepted from one TaskExecutor, ready
/// to deploy there: their deployments and, in the same order, their
/// executions.
struct deployment_batch {
  std::vector<task_deployment> tasks;
  std::vector<int32_t> executions;
};

/// Where a failure happened: the subtask ("chain (i/n)") and its
/// TaskExecutor, each "" when not known.
struct failure_site {
  std::string task;
  std::string location;
};

template <class Executor, class Subtask>
class job_scheduler {
public:
  /// The first round of `g`: no slots, nothing deployed.
  explicit job_scheduler(const job_graph& g)
    : graph_(g), slots_(graph_.slots_needed()) {
    subtasks_.reset(graph_.size());
  }

  execution_graph& graph() { return graph_; }
  const execution_graph& graph() const { return graph_; }
  slot_assignment<Executor>& slots() { return slots_; }
  const slot_assignment<Executor>& slots() const { return slots_; }
  deployed_subtasks<Subtask>& subtasks() { return subtasks_; }

  /// A new round after a failure: new attempts of every subtask, no slot
  /// held, nothing deployed. With `resume`, its deployment restores the
  /// newest completed checkpoint.
  void new_round(bool resume) {
    graph_.restart();
    subtasks_.reset(graph_.size());
    slots_.reset();
    restores_state_ = resume;
  }

  /// The round's slot requests, one per slot, sent at `now_ms` (wall
  /// clock, for `status`).
  std::vector<slot_request> request_slots(const resource_profile& profile,
                                          int64_t now_ms) {
    requested_ms_ = now_ms;
    return slots_.request_all(profile);
  }

  /// When the round's slot request went out (0: not yet).
  int64_t slots_requested_ms() const { return requested_ms_; }

  /// Why the ResourceManager cannot meet the requests ("": it can, or
  /// said nothing).
  const std::string& slots_unmet() const { return unmet_; }
  void slots_unmet(std::string why) { unmet_ = std::move(why); }

  /// Whether this round's deployment restores the newest completed
  /// checkpoint (or the savepoint the job starts from).
  bool restores_state() const { return restores_state_; }
  void restore_state() { restores_state_ = true; }

  /// The deployments of every subtask in `slots` (shared slots and the
  /// allocations they came with), each moved to DEPLOYING, with the state
  /// backend `backend`; when the round restores state, each restores its
  /// part of `restore` (by execution; null: nothing to restore).
  deployment_batch
  deploy(const std::vector<std::pair<int32_t, allocation_id>>& slots,
         const state_backend_desc& backend,
         const std::map<int32_t, operator_states>* restore) {
    deployment_batch out;
    if (!restores_state_)
      restore = nullptr;
    for (auto& [slot, alloc] : slots) {
      for (auto flat : graph_.executions_in_slot(slot)) {
        graph_.transition(flat, execution_state::scheduled);
        graph_.transition(flat, execution_state::deploying);
        auto d = graph_.deployment(flat, alloc);
        d.backend = backend;
        d.code = graph_.graph().code;
        if (restore != nullptr)
          if (auto i = restore->find(flat); i != restore->end())
            d.restore = i->second;
        out.tasks.push_back(std::move(d));
        out.executions.push_back(flat);
      }
    }
    return out;
  }

  /// A TaskExecutor spawned `spawned` for `executions` (a batch's, in its
  /// order). True once every subtask of the round is deployed: then the
  /// round starts.
  bool deployed(const std::vector<int32_t>& executions,
                const std::vector<Subtask>& spawned) {
    for (size_t i = 0; i < spawned.size() && i < executions.size(); ++i)
      subtasks_.deployed(executions[i], spawned[i]);
    return subtasks_.complete();
  }

  /// Execution `flat`'s consumers, per output: whom it sends to once
  /// started. Start in reverse execution order (consumers first), so a
  /// consumer runs before the first batch of a local producer reaches it.
  std::vector<std::vector<Subtask>> consumers_of(int32_t flat) const {
    std::vector<std::vector<Subtask>> out;
    for (auto& list : graph_.consumers(flat)) {
      std::vector<Subtask> hs;
      hs.reserve(list.size());
      for (auto c : list)
        hs.push_back(subtasks_[static_cast<size_t>(c)]);
      out.push_back(std::move(hs));
    }
    return out;
  }

  /// Where execution `flat` runs: "chain (i/n)" and the name of the
  /// TaskExecutor holding its slot ("" when none does).
  failure_site site_of(int32_t flat) const {
    auto& x = graph_.executions()[static_cast<size_t>(flat)];
    auto& t = graph_.tasks()[static_cast<size_t>(x.task)];
    return failure_site{
      fmt::format("{} ({}/{})", t.name, x.subtask + 1, t.parallelism),
      slots_.executor_name(x.subtask)};
  }

private:
  execution_graph graph_;
  slot_assignment<Executor> slots_;
  deployed_subtasks<Subtask> subtasks_;
  int64_t requested_ms_ = 0;
  std::string unmet_;
  bool restores_state_ = false;
};

} // namespace weir
