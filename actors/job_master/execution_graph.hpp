#pragma once

#include <array>
#include <map>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include <caf/error.hpp>

#include "messages/deployment.hpp"
#include "messages/ids.hpp"
#include "messages/job_graph.hpp"
#include "messages/job_result.hpp"
#include "messages/states.hpp"

namespace weir {

/// One task: a chain of vertices that runs as one subtask per parallel
/// instance.
struct task_vertex {
  std::string name;              ///< "lines -> words"
  std::vector<int32_t> vertices; ///< indices into the job graph, upstream first
  int32_t parallelism = 1;
  /// Its key groups (messages/key_groups.hpp): pipeline.max-parallelism,
  /// else that of the savepoint it restores, else Flink's default rule.
  int32_t max_parallelism = 128;
  bool max_parallelism_set = false; ///< by pipeline.max-parallelism
  std::vector<int32_t> inputs;   ///< job-graph edges into the chain's head
  std::vector<int32_t> outputs;  ///< job-graph edges out of the chain's tail
  int32_t first_execution = 0;   ///< flat index of subtask 0
};

/// One subtask's current attempt.
struct execution {
  int32_t task = 0;
  int32_t subtask = 0;
  execution_attempt_id attempt;
  /// Restarts of the job before this attempt (operator_context).
  int32_t attempt_number = 0;
  execution_state state = execution_state::created;
  io_metrics metrics;
  /// Wall clock of its DEPLOYING (0: not yet) and of its terminal state
  /// (0: none yet), for the REST API's subtask durations.
  int64_t start_time_ms = 0;
  int64_t end_time_ms = 0;
};

/// The JobGraph expanded into tasks (operator chains) and their parallel
/// subtasks, with each subtask's state. Plain class, no actors.
///
/// Slots are shared as in Flink's default slot-sharing group: slot k runs
/// subtask k of every task, so a job needs as many slots as its highest
/// parallelism.
class execution_graph {
public:
  explicit execution_graph(const job_graph& g);

  const job_graph& graph() const { return graph_; }
  const std::vector<task_vertex>& tasks() const { return tasks_; }
  const std::vector<execution>& executions() const { return executions_; }
  size_t size() const { return executions_.size(); }

  /// Slots the job needs (its highest parallelism).
  int32_t slots_needed() const { return slots_needed_; }

  /// pipeline.max-parallelism for every task; invalid_job naming the
  /// vertex when one runs at a higher parallelism.
  [[nodiscard]] caf::error set_max_parallelism(int32_t n);

  /// A task that restores a savepoint keeps the key groups it recorded for
  /// the task's vertices (unless pipeline.max-parallelism is set).
  void adopt_max_parallelism(const std::map<std::string, int32_t>& recorded);

  /// The max parallelism of vertex `v` (an index into the job graph).
  int32_t max_parallelism_of(int32_t v) const;

  /// Flat indices of the subtasks that run in shared slot `slot`.
  std::vector<int32_t> executions_in_slot(int32_t slot) const;

  /// The deployment descriptor of subtask `flat` in allocation `alloc`.
  task_deployment deployment(int32_t flat, allocation_id alloc) const;

  /// For each output of subtask `flat`, the flat indices of its consumers in
  /// subtask-index order.
  std::vector<std::vector<int32_t>> consumers(int32_t flat) const;

  /// Flat index of the attempt, or -1 when it is not a current attempt.
  int32_t find(execution_attempt_id attempt) const;

  /// Moves an execution to `to` if Flink's state machine allows it.
  bool transition(int32_t flat, execution_state to);

  /// Starts over for a restart: every subtask gets a new attempt in state
  /// CREATED with zero counters and the next attempt number; messages of
  /// old attempts no longer match.
  void restart();

  /// Execution `flat` is attempt `attempt` (number `number`), running: a
  /// subtask that a JobMaster before this one deployed, adopted after a
  /// failover.
  void adopt(int32_t flat, execution_attempt_id attempt, int32_t number);
  /// Every execution's attempt number becomes `n`: a graph rebuilt at
  /// another parallelism goes on counting the job's restarts.
  void set_attempt_number(int32_t n);

  /// Replaces counters of an execution.
  void set_metrics(int32_t flat, const io_metrics& m);

  int32_t count(execution_state s) const;
  bool all_finished() const;
  bool all_terminal() const;
  io_metrics total_metrics() const;
  /// Whether every source of the job ends by itself.
  bool bounded() const { return bounded_; }

private:
  input_gate_desc gate_for(int32_t edge) const;
  output_desc output_for(int32_t edge) const;

  job_graph graph_;
  std::vector<task_vertex> tasks_;
  std::vector<execution> executions_;
  std::vector<int32_t> task_of_vertex_;
  std::unordered_map<execution_attempt_id, int32_t> by_attempt_;
  std::array<int32_t, 9> counts_{}; // executions per state
  int32_t slots_needed_ = 0;
  bool bounded_ = true;
};

} // namespace weir
