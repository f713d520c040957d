#include "actors/job_master/restart_strategy.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "config/config.hpp"
#include "config/keys.hpp"

namespace weir {

std::string to_string(restart_strategy_config::kind k) {
  using kind = restart_strategy_config::kind;
  switch (k) {
    case kind::none:
      return "none";
    case kind::fixed_delay:
      return "fixed-delay";
    case kind::exponential_delay:
      return "exponential-delay";
    case kind::failure_rate:
      return "failure-rate";
  }
  return "none";
}

restart_strategy_config restart_strategy_config::from(const configuration& cfg) {
  restart_strategy_config c;
  auto type = cfg.get(keys::restart_strategy);
  if (type == "fixed-delay" || type == "fixeddelay")
    c.type = kind::fixed_delay;
  else if (type == "exponential-delay" || type == "exponentialdelay")
    c.type = kind::exponential_delay;
  else if (type == "failure-rate" || type == "failurerate")
    c.type = kind::failure_rate;
  else
    c.type = kind::none;
  c.attempts = cfg.get(keys::fixed_delay_attempts);
  c.delay = cfg.get(keys::fixed_delay_delay);
  c.initial_backoff = cfg.get(keys::exponential_initial_backoff);
  c.max_backoff = cfg.get(keys::exponential_max_backoff);
  c.multiplier = cfg.get(keys::exponential_backoff_multiplier);
  c.jitter = cfg.get(keys::exponential_jitter_factor);
  c.reset_threshold
    = cfg.get(keys::exponential_reset_backoff_threshold);
  c.attempts_before_reset = cfg.get(keys::exponential_attempts);
  c.max_failures_per_interval
    = cfg.get(keys::failure_rate_max_failures);
  c.failure_rate_interval
    = cfg.get(keys::failure_rate_interval);
  c.failure_rate_delay = cfg.get(keys::failure_rate_delay);
  return c;
}

restart_strategy::restart_strategy(restart_strategy_config cfg, uint64_t seed)
  : cfg_(cfg), rng_(seed) {
  // nop
}

std::optional<std::chrono::milliseconds>
restart_strategy::on_failure(clock::time_point now) {
  using kind = restart_strategy_config::kind;
  using std::chrono::milliseconds;
  switch (cfg_.type) {
    case kind::none:
      reason_ = "restart strategy none: a failure ends the job";
      return std::nullopt;
    case kind::fixed_delay:
      if (restarts_ >= cfg_.attempts) {
        reason_ = fmt::format("restart strategy fixed-delay: {} restart "
                              "attempts used up",
                              cfg_.attempts);
        return std::nullopt;
      }
      ++restarts_;
      return cfg_.delay;
    case kind::exponential_delay: {
      // A long quiet period resets the backoff, as in Flink.
      if (last_failure_ && now - *last_failure_ >= cfg_.reset_threshold) {
        backoff_ = milliseconds{0};
        attempts_since_reset_ = 0;
      }
      last_failure_ = now;
      if (attempts_since_reset_ >= cfg_.attempts_before_reset) {
        reason_ = fmt::format("restart strategy exponential-delay: {} restart "
                              "attempts used up",
                              cfg_.attempts_before_reset);
        return std::nullopt;
      }
      ++attempts_since_reset_;
      backoff_ = backoff_.count() == 0
                   ? cfg_.initial_backoff
                   : std::min(cfg_.max_backoff,
                              milliseconds{static_cast<int64_t>(
                                static_cast<double>(backoff_.count())
                                * cfg_.multiplier)});
      std::uniform_real_distribution<double> spread{-cfg_.jitter, cfg_.jitter};
      auto jittered = static_cast<double>(backoff_.count()) * (1.0 + spread(rng_));
      ++restarts_;
      return milliseconds{std::max<int64_t>(0, static_cast<int64_t>(jittered))};
    }
    case kind::failure_rate:
      failures_.push_back(now);
      while (!failures_.empty()
             && now - failures_.front() > cfg_.failure_rate_interval)
        failures_.pop_front();
      if (static_cast<int64_t>(failures_.size()) > cfg_.max_failures_per_interval) {
        reason_ = fmt::format("restart strategy failure-rate: more than {} "
                              "failures within {} ms",
                              cfg_.max_failures_per_interval,
                              cfg_.failure_rate_interval.count());
        return std::nullopt;
      }
      ++restarts_;
      return cfg_.failure_rate_delay;
  }
  return std::nullopt;
}

} // namespace weir
