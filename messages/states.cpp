#include "messages/states.hpp"

#include <array>

namespace weir {

namespace {

constexpr std::array<const char*, 9> job_state_names{
  "CREATED", "RUNNING",  "FAILING",    "FAILED",   "CANCELLING",
  "CANCELED", "FINISHED", "RESTARTING", "SUSPENDED"};

constexpr std::array<const char*, 9> execution_state_names{
  "CREATED",  "SCHEDULED", "DEPLOYING", "INITIALIZING", "RUNNING",
  "FINISHED", "CANCELING", "CANCELED",  "FAILED"};

} // namespace

std::string to_string(job_state x) {
  return job_state_names[static_cast<size_t>(x)];
}

std::string to_string(execution_state x) {
  return execution_state_names[static_cast<size_t>(x)];
}

std::optional<job_state> parse_job_state(std::string_view text) {
  for (size_t i = 0; i < job_state_names.size(); ++i)
    if (text == job_state_names[i])
      return static_cast<job_state>(i);
  return std::nullopt;
}

bool is_globally_terminal(job_state x) {
  return x == job_state::finished || x == job_state::failed
         || x == job_state::canceled;
}

bool is_terminal(execution_state x) {
  return x == execution_state::finished || x == execution_state::canceled
         || x == execution_state::failed;
}

bool is_valid_transition(execution_state from, execution_state to) {
  using es = execution_state;
  if (is_terminal(from))
    return false;
  switch (to) {
    case es::failed:
    case es::canceled:
      return true;
    case es::canceling:
      return from != es::canceling;
    case es::finished:
      return from == es::running;
    case es::created:
      return false;
    default:
      // Forward only, one step at a time or skipping ahead (Flink allows
      // SCHEDULED → DEPLOYING → INITIALIZING → RUNNING); never from CANCELING.
      return from != es::canceling && static_cast<int>(to) > static_cast<int>(from);
  }
}

bool is_valid_transition(job_state from, job_state to) {
  using js = job_state;
  if (is_globally_terminal(from))
    return false;
  switch (from) {
    case js::created:
      return to == js::running || to == js::failed || to == js::cancelling
             || to == js::suspended;
    case js::running:
      return to == js::finished || to == js::failing || to == js::cancelling
             || to == js::restarting || to == js::suspended;
    case js::failing:
      return to == js::failed || to == js::restarting || to == js::cancelling;
    case js::cancelling:
      return to == js::canceled || to == js::failed;
    case js::restarting:
      return to == js::running || to == js::created || to == js::cancelling
             || to == js::failed || to == js::suspended;
    case js::suspended:
      return to == js::created || to == js::running;
    default:
      return false;
  }
}

} // namespace weir
