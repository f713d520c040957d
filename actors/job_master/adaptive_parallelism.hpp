#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "messages/job_graph.hpp"

namespace weir {

class configuration;

/// jobmanager.scheduler and the adaptive scheduler's keys.
struct adaptive_options {
  /// jobmanager.scheduler: adaptive.
  bool enabled = false;
  /// scheduler-mode: reactive (every vertex up to its max parallelism).
  bool reactive = false;
  std::chrono::milliseconds stabilization{10000};
  std::chrono::milliseconds resource_wait{300000};

  static adaptive_options from(const configuration& cfg);
};

/// The adaptive scheduler's decisions (Flink's AdaptiveScheduler), as a
/// plain class: the parallelism a job runs at from the slots it could
/// hold, and when more slots warrant scaling up. Each vertex runs at
/// min(its upper bound, n) for the job's n: its configured parallelism,
/// or in reactive mode its max parallelism (docs/state.md § Adaptive
/// scheduler).
class adaptive_parallelism {
public:
  using clock = std::chrono::steady_clock;

  adaptive_parallelism() = default;

  /// `configured`: the job as submitted; `upper`: each vertex's upper
  /// bound, in the graph's vertex order.
  adaptive_parallelism(adaptive_options opts, job_graph configured,
                       std::vector<int32_t> upper);

  const adaptive_options& options() const { return opts_; }

  /// The most slots the job can use (its highest upper bound).
  int32_t desired() const { return desired_; }

  /// The job's n when it could hold `available` slots (0: none).
  int32_t target(int32_t available) const;

  /// The job at `n`: each vertex at min(upper, n), and the two ends of a
  /// forward edge at the lower of theirs.
  job_graph graph_at(int32_t n) const;

  /// The job runs at `current` and could hold `available` slots at `now`:
  /// the n to scale up to once more slots stayed available for the
  /// stabilization timeout; nothing otherwise.
  std::optional<int32_t> scale_up(int32_t current, int32_t available,
                                  clock::time_point now);

private:
  adaptive_options opts_;
  job_graph configured_;
  std::vector<int32_t> upper_;
  int32_t desired_ = 0;
  /// Since when more slots than the job runs at have been available.
  std::optional<clock::time_point> more_since_;
};

} // namespace weir
