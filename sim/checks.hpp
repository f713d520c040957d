#pragma once

// The invariants a simulated run checks as it goes (docs/simulation.md
// § Invariants), against the real actors' state and the messages they
// handle: a finished job never runs again, one JobMaster acts per job, no
// slot holds two jobs' subtasks, and (with the client's results) output
// exactly once.

#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include <caf/actor.hpp>

#include "messages/ids.hpp"
#include "sim/world.hpp"

namespace weir::sim {

class checks {
public:
  explicit checks(world& w) : world_(w) {
  }
  ~checks();

  /// The job's result is stored: it never runs again.
  void finished(const job_id& job);
  bool is_finished(const job_id& job) const {
    return finished_.count(job) > 0;
  }

  void before(const delivery& d);
  void after(caf::scheduled_actor* a, int host);

  /// Records a broken invariant (the first few; the run stops).
  void broke(std::string what);
  const std::vector<std::string>& broken() const { return broken_; }

private:
  void check_task_executor(caf::scheduled_actor* a, int host);
  void check_job_master(caf::scheduled_actor* a, int host);

  world& world_;
  std::map<job_id, time_point> finished_;
  /// Which slot each allocation is in, per TaskExecutor (from the
  /// ResourceManager's grants).
  std::unordered_map<caf::actor_id, std::unordered_map<allocation_id, int32_t>>
    slot_of_;
  /// The job of each subtask a TaskExecutor ran.
  std::unordered_map<caf::actor_id, job_id> subtask_job_;
  struct jm_entry {
    job_id job;
    int host;
  };
  /// Live JobMasters by actor id (dropped when they end).
  std::shared_ptr<std::map<caf::actor_id, jm_entry>> job_masters_
    = std::make_shared<std::map<caf::actor_id, jm_entry>>();
  /// Monitors the JobMasters (an actor outside the hosts).
  caf::actor watcher_;
  std::vector<std::string> broken_;
};

} // namespace weir::sim
