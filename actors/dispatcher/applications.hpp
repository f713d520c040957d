#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "messages/ids.hpp"
#include "messages/job_graph.hpp"
#include "messages/states.hpp"

namespace weir {

/// Applications of driver mode (the seed's DriverDispatcher rules, as a
/// plain class): a driver job and the jobs it submitted. When the driver
/// fails, every job of its application is cancelled; once no driver or
/// normal job of an application is left, its daemon jobs are cancelled;
/// when nothing of it runs any more, the application has ended.
class application_tracker {
public:
  /// What the Dispatcher does after a job ended.
  struct decision {
    /// Jobs to cancel now.
    std::vector<job_id> cancel;
    /// Set when an application ended: its driver job's id.
    std::optional<job_id> ended;
    /// Its exit status: 0 when the driver and every normal job finished,
    /// else 1.
    int status = 0;
    /// Why it failed (the driver's error, or a failed job's).
    std::string error;
  };

  /// Job `id` was submitted (or recovered) with this priority, as part of
  /// `application` (nil: none; a driver job is its own application).
  void submitted(const job_id& id, job_priority priority,
                 const job_id& application);

  /// Job `id` ended in `state`.
  decision ended(const job_id& id, job_state state, const std::string& error);

  /// Job `id` is being cancelled. A driver job takes its application along,
  /// as a failing driver does: returns the application's other jobs that
  /// run (to cancel now), and the application accepts no more jobs.
  std::vector<job_id> cancelled(const job_id& id);

  /// Whether jobs of `application` (nil: none) may still be submitted: not
  /// once its driver is being cancelled.
  bool accepts(const job_id& application) const;

private:
  struct job {
    job_priority priority = job_priority::normal;
    job_id application;
    bool running = true;
    job_state state = job_state::created;
    std::string error;
  };

  std::map<job_id, job> jobs_;
  /// Applications whose driver is being cancelled.
  std::set<job_id> closed_;
};

} // namespace weir
