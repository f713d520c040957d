#include "actors/job_master/job_lifecycle.hpp"

namespace weir {

job_lifecycle::job_lifecycle(restart_strategy_config restarts)
  : restarts_(std::move(restarts)) {
}

bool job_lifecycle::active() const {
  return state_ == job_state::running || state_ == job_state::created;
}

bool job_lifecycle::set_state(job_state to) {
  if (!is_valid_transition(state_, to))
    return false;
  state_ = to;
  return true;
}

failure_decision job_lifecycle::on_failure(time_point now, std::string cause) {
  failure_decision d;
  if (!active())
    return d; // already failing, restarting or cancelling
  auto delay = restarts_.on_failure(now);
  if (!delay) {
    d.what = failure_decision::action::fail;
    d.cause = restarts_.never_restarts()
                ? std::move(cause)
                : cause + " (" + restarts_.reason() + ")";
    return d;
  }
  d.what = failure_decision::action::restart;
  d.delay = *delay;
  d.cause = std::move(cause);
  restart_delay_ = *delay;
  return d;
}

bool job_lifecycle::fail(std::string cause) {
  if (!active())
    return false;
  failure_ = std::move(cause);
  set_state(job_state::failing);
  return true;
}

bool job_lifecycle::fail_restarting(std::string cause) {
  if (state_ != job_state::restarting)
    return false;
  failure_ = std::move(cause);
  set_state(job_state::failed);
  return true;
}

bool job_lifecycle::cancel() {
  if (!active() && state_ != job_state::restarting)
    return false;
  set_state(job_state::cancelling);
  if (failure_.empty())
    failure_ = "job was canceled";
  return true;
}

void job_lifecycle::restart() {
  ++epoch_;
  set_state(job_state::running);
}

std::optional<job_state> job_lifecycle::end_state(bool all_finished) const {
  if (state_ == job_state::failing)
    return job_state::failed;
  if (state_ == job_state::cancelling)
    return job_state::canceled;
  if (all_finished)
    return job_state::finished;
  return std::nullopt;
}

bool job_lifecycle::finalize() {
  if (finalized_)
    return false;
  finalized_ = true;
  return true;
}

} // namespace weir
