#pragma once

// Where the JobMaster's current round stands: the execution graph (every
// subtask's attempt and state), which slot runs which subtask, the
// deployed subtasks and the round's slot request. The JobMaster's
// scheduling and failover code works through it; a restart starts a new
// round. The bookkeeping part of Flink's SchedulerNG, as a plain class:
// templated on the actor handles, so unit tests use stand-ins.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "actors/job_master/deployed_subtasks.hpp"
#include "actors/job_master/execution_graph.hpp"
#include "actors/job_master/slot_assignment.hpp"

namespace weir {

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
