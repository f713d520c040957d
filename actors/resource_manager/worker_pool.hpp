#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "messages/ids.hpp"
#include "messages/slots.hpp"

namespace weir {

/// Options of an active ResourceManager (driver mode, Flink's
/// resourcemanager.* keys).
struct worker_pool_options {
  /// Slots of a worker started for requests without a profile
  /// (taskmanager.numberOfTaskSlots).
  int32_t slots_per_worker = 1;
  /// resourcemanager.taskmanager-timeout: a started worker idle this long
  /// is stopped.
  std::chrono::milliseconds idle_timeout{30000};
  /// resourcemanager.start-worker.max-failure-rate: failed starts per
  /// minute after which no worker is started until the minute has passed.
  int32_t max_failures_per_minute = 10;
};

/// Which workers an active ResourceManager starts and stops (plain class):
/// enough for the pending slot requests, counting those already starting;
/// a worker for a request with a profile (the driver's) gets one slot of
/// exactly that profile.
class worker_pool {
public:
  using clock = std::chrono::steady_clock;

  /// A worker to start.
  struct start_order {
    resource_id id;
    int32_t slots = 1;
    resource_profile slot_profile;
  };

  explicit worker_pool(worker_pool_options opts);

  /// Workers to start for `pending` requests (their profiles) that the
  /// registered workers could not serve; none while the failure rate is
  /// exceeded.
  std::vector<start_order> plan(const std::vector<resource_profile>& pending,
                                clock::time_point now);

  /// A worker this pool started registered.
  void registered(const resource_id& id, clock::time_point now);

  /// A worker this pool started ended; before it registered, that is a
  /// failed start.
  void exited(const resource_id& id, clock::time_point now);

  /// Registered workers that have been idle (`is_idle(id)`: no slot held)
  /// longer than the timeout: to stop (each is returned once).
  template <class IsIdle>
  std::vector<resource_id> idle(IsIdle is_idle, clock::time_point now) {
    std::vector<resource_id> out;
    for (auto& [id, w] : workers_) {
      if (!w.registered || w.stopping)
        continue;
      if (!is_idle(id)) {
        w.idle_since = now;
        continue;
      }
      if (now - w.idle_since >= opts_.idle_timeout) {
        w.stopping = true;
        out.push_back(id);
      }
    }
    return out;
  }

  /// Whether starts are paused by the failure rate.
  bool throttled(clock::time_point now);

private:
  struct worker {
    int32_t slots = 1;
    resource_profile slot_profile;
    bool registered = false;
    bool stopping = false;
    clock::time_point idle_since;
  };

  worker_pool_options opts_;
  int64_t next_ = 1;
  std::map<resource_id, worker> workers_;
  std::deque<clock::time_point> failures_;
};

} // namespace weir
