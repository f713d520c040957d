#pragma once

// Jobmanager failover without task restarts (docs/state.md § Jobmanager
// failover without task restarts): whether the subtasks that workers kept
// running for a lost JobMaster are exactly the executions of the job its
// successor recovered. Plain functions over the execution graph.

#include <string>
#include <vector>

#include "actors/job_master/execution_graph.hpp"
#include "messages/running_attempt.hpp"

namespace weir {

/// The outcome of matching reported subtasks to a job's executions.
struct adoption_plan {
  /// By flat execution index: the running attempt that is that execution
  /// (empty when `problem` is set).
  std::vector<running_attempt> attempts;
  /// Why they cannot be adopted ("" when they can).
  std::string problem;
};

/// Matches `reported` to the executions of `g`: adoptable when every
/// execution runs exactly once, at the graph's parallelism, with the same
/// chain; else the first reason why not, for the log.
adoption_plan plan_adoption(const execution_graph& g,
                            std::vector<running_attempt> reported);

} // namespace weir
