#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <random>
#include <string>

namespace weir {

class configuration;

/// Flink's restart strategies (restart-strategy.type) and their settings,
/// with Flink's defaults.
struct restart_strategy_config {
  enum class kind { none, fixed_delay, exponential_delay, failure_rate };
  kind type = kind::exponential_delay;
  // fixed-delay
  int64_t attempts = 1;
  std::chrono::milliseconds delay{1000};
  // exponential-delay
  std::chrono::milliseconds initial_backoff{1000};
  std::chrono::milliseconds max_backoff{60000};
  double multiplier = 2.0;
  double jitter = 0.1;
  std::chrono::milliseconds reset_threshold{3600000};
  int64_t attempts_before_reset = 5;
  // failure-rate
  int64_t max_failures_per_interval = 1;
  std::chrono::milliseconds failure_rate_interval{60000};
  std::chrono::milliseconds failure_rate_delay{1000};

  /// Reads the restart-strategy.* keys.
  static restart_strategy_config from(const configuration& cfg);
};

/// Decides, failure by failure, whether a job restarts and after how long.
/// Plain class; time is passed in so tests control it.
class restart_strategy {
public:
  using clock = std::chrono::steady_clock;

  explicit restart_strategy(restart_strategy_config cfg, uint64_t seed = 42);

  /// A failure happened at `now`: the delay before restarting, or nothing
  /// when the job must fail for good.
  std::optional<std::chrono::milliseconds> on_failure(clock::time_point now);

  /// Why the last refused failure ends the job, e.g. "restart strategy
  /// fixed-delay: 3 restart attempts used up".
  const std::string& reason() const { return reason_; }

  /// Whether the strategy is `none` (its refusals need no explanation).
  bool never_restarts() const {
    return cfg_.type == restart_strategy_config::kind::none;
  }

  /// Restarts granted so far.
  int64_t restarts() const { return restarts_; }

private:
  restart_strategy_config cfg_;
  int64_t restarts_ = 0;
  std::string reason_;
  std::deque<clock::time_point> failures_; // failure-rate window
  std::chrono::milliseconds backoff_{0};   // exponential-delay
  int64_t attempts_since_reset_ = 0;       // exponential-delay
  std::optional<clock::time_point> last_failure_;
  std::mt19937_64 rng_;
};

std::string to_string(restart_strategy_config::kind k);

} // namespace weir
