#pragma once

#include <chrono>
#include <deque>
#include <string>

namespace weir {

class configuration;

/// A supervisor's restart intensity (jobmanager.supervision.max-restarts and
/// jobmanager.supervision.within).
struct supervision_options {
  int max_restarts = 3;
  std::chrono::milliseconds within{60000};

  /// Reads jobmanager.supervision.*.
  static supervision_options from(const configuration& cfg);
};

/// Erlang/OTP's restart intensity: a supervisor may restart its children at
/// most `max_restarts` times within any window of `within`; one more crash
/// and it gives up (and escalates to its own supervisor).
class restart_intensity {
public:
  using clock = std::chrono::steady_clock;

  restart_intensity(int max_restarts, std::chrono::milliseconds within);

  /// jobmanager.supervision.max-restarts within jobmanager.supervision.within.
  explicit restart_intensity(const supervision_options& opts = {})
    : restart_intensity(opts.max_restarts, opts.within) {
  }

  /// Records a crash at `now`; true when a restart is still allowed.
  bool on_crash(clock::time_point now);

  /// Restarts recorded within the window ending at the last crash.
  int recent() const { return static_cast<int>(restarts_.size()); }

  /// How long to wait before the restart on_crash() just allowed: none for
  /// the first within the window, then 100 ms doubling per restart (at most
  /// 10 s), so that a child failing at once on every start does not spin.
  std::chrono::milliseconds backoff() const;

  int max_restarts() const { return max_restarts_; }
  std::chrono::milliseconds within() const { return within_; }

  /// "3 restarts within 60000 ms" (for log lines and errors).
  std::string describe() const;

private:
  int max_restarts_;
  std::chrono::milliseconds within_;
  std::deque<clock::time_point> restarts_;
};

} // namespace weir
