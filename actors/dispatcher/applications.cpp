#include "actors/dispatcher/applications.hpp"

#include <fmt/format.h>

namespace weir {

void application_tracker::submitted(const job_id& id, job_priority priority,
                                    const job_id& application) {
  auto& j = jobs_[id];
  j.priority = priority;
  j.application = priority == job_priority::driver ? id : application;
  j.running = true;
}

application_tracker::decision
application_tracker::ended(const job_id& id, job_state state,
                           const std::string& error) {
  decision d;
  auto i = jobs_.find(id);
  if (i == jobs_.end() || !i->second.application.valid())
    return d;
  i->second.running = false;
  i->second.state = state;
  i->second.error = error;
  auto app = i->second.application;
  auto driver = jobs_.find(app);
  if (driver == jobs_.end())
    return d;
  auto& drv = driver->second;
  bool driver_failed = !drv.running && drv.state != job_state::finished;
  bool keeps_alive = false; // a driver or normal job still running
  bool any_running = false;
  for (auto& [jid, j] : jobs_) {
    if (j.application != app || !j.running)
      continue;
    any_running = true;
    keeps_alive = keeps_alive || j.priority != job_priority::daemon;
  }
  if (driver_failed || !keeps_alive)
    for (auto& [jid, j] : jobs_)
      if (j.application == app && j.running
          && (driver_failed || j.priority == job_priority::daemon))
        d.cancel.push_back(jid);
  if (any_running || drv.running)
    return d;
  // Everything of the application ended.
  d.ended = app;
  if (driver_failed) {
    d.status = 1;
    d.error = drv.error;
  } else {
    for (auto& [jid, j] : jobs_)
      if (j.application == app && j.priority == job_priority::normal
          && j.state == job_state::failed) {
        d.status = 1;
        d.error = fmt::format("job {} failed: {}", jid.to_string(), j.error);
        break;
      }
  }
  for (auto it = jobs_.begin(); it != jobs_.end();)
    it = it->second.application == app ? jobs_.erase(it) : std::next(it);
  closed_.erase(app);
  return d;
}

std::vector<job_id> application_tracker::cancelled(const job_id& id) {
  std::vector<job_id> out;
  auto i = jobs_.find(id);
  if (i == jobs_.end() || i->second.priority != job_priority::driver
      || !i->second.running)
    return out;
  closed_.insert(id);
  for (auto& [jid, j] : jobs_)
    if (j.application == id && j.running && jid != id)
      out.push_back(jid);
  return out;
}

bool application_tracker::accepts(const job_id& application) const {
  return closed_.count(application) == 0;
}

} // namespace weir
