#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace weir {

/// A job's state, with Flink's names (JobStatus).
enum class job_state : uint8_t {
  created,
  running,
  failing,
  failed,
  cancelling,
  canceled,
  finished,
  restarting,
  suspended,
};

/// A subtask execution's state, with Flink's names (ExecutionState).
enum class execution_state : uint8_t {
  created,
  scheduled,
  deploying,
  initializing,
  running,
  finished,
  canceling,
  canceled,
  failed,
};

std::string to_string(job_state x);
std::string to_string(execution_state x);
std::optional<job_state> parse_job_state(std::string_view text);

/// FINISHED, FAILED and CANCELED end a job for good (SUSPENDED does not).
bool is_globally_terminal(job_state x);
/// FINISHED, CANCELED and FAILED end an execution attempt.
bool is_terminal(execution_state x);

/// Whether an execution may move from `from` to `to` (Flink's transitions:
/// forward along CREATED → … → FINISHED, or to CANCELING/CANCELED/FAILED
/// from any non-terminal state).
bool is_valid_transition(execution_state from, execution_state to);
/// Whether a job may move from `from` to `to` (Flink's JobStatus graph).
bool is_valid_transition(job_state from, job_state to);

} // namespace weir
