#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "actors/job_master/restart_strategy.hpp"
#include "messages/states.hpp"

namespace weir {

/// What the JobMaster is to do about a failure of a subtask or
/// TaskExecutor.
struct failure_decision {
  enum class action {
    /// The job is already failing, restarting or cancelling.
    ignore,
    /// Stop every subtask, wait `delay`, schedule the job again.
    restart,
    /// Fail the job for good with `cause`.
    fail,
  };
  action what = action::ignore;
  std::chrono::milliseconds delay{0};
  /// The failure's cause (for `fail`: with the restart strategy's reason).
  std::string cause;
};

/// The job's life as the JobMaster sees it (the state diagram atop
/// job_master.cpp): its state, scheduling round, restarts, failure cause and
/// whether a stop was asked. Plain class: it decides; the actor acts.
class job_lifecycle {
public:
  using time_point = restart_strategy::clock::time_point;

  explicit job_lifecycle(restart_strategy_config restarts);

  job_state state() const { return state_; }

  /// The scheduling round; replies of older rounds are stale.
  uint64_t epoch() const { return epoch_; }

  /// Why the job failed or was canceled (empty: it did not).
  const std::string& failure() const { return failure_; }

  /// How long to wait before the pending restart.
  std::chrono::milliseconds restart_delay() const { return restart_delay_; }

  /// Whether the job is scheduled or being scheduled (CREATED, RUNNING).
  bool active() const;

  /// Moves to `to` when the transition is allowed; false otherwise.
  bool set_state(job_state to);

  /// A subtask or TaskExecutor failed at `now` because of `cause`: restart
  /// (the restart strategy allows it), fail or ignore. Changes no state.
  failure_decision on_failure(time_point now, std::string cause);

  /// Fails the job for good with `cause` (FAILING); false when it is not
  /// active.
  bool fail(std::string cause);

  /// Fails a job waiting to restart (no subtask runs) for good with
  /// `cause`: FAILED at once; false when it is not RESTARTING.
  bool fail_restarting(std::string cause);

  /// A client's cancel (CANCELLING); false when the job cannot be canceled
  /// (any more).
  bool cancel();

  /// The restart delay passed: the next scheduling round (RUNNING).
  void restart();

  /// The state the job ends in once all its subtasks stopped, if it moves.
  std::optional<job_state> end_state(bool all_finished) const;

  /// Marks the job as ended; false when it was already.
  bool finalize();

private:
  job_state state_ = job_state::created;
  uint64_t epoch_ = 0;
  std::string failure_;
  bool finalized_ = false;
  std::chrono::milliseconds restart_delay_{0};
  restart_strategy restarts_;
};

} // namespace weir
