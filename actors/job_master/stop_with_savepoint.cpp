#include "actors/job_master/stop_with_savepoint.hpp"

namespace weir {

bool stop_with_savepoint::begin(int64_t checkpoint_id) {
  if (busy())
    return false;
  phase_ = phase::taking_savepoint;
  checkpoint_ = checkpoint_id;
  return true;
}

bool stop_with_savepoint::failed() {
  if (phase_ != phase::taking_savepoint)
    return false;
  phase_ = phase::idle;
  return true;
}

void stop_with_savepoint::written(checkpoint_request req, std::string path) {
  phase_ = phase::draining;
  reply_.emplace(std::move(req), std::move(path));
}

std::optional<std::pair<checkpoint_request, std::string>>
stop_with_savepoint::finished() {
  phase_ = phase::idle;
  return std::exchange(reply_, std::nullopt);
}

const char* to_string(stop_with_savepoint::phase p) {
  switch (p) {
    case stop_with_savepoint::phase::idle:
      return "idle";
    case stop_with_savepoint::phase::taking_savepoint:
      return "taking its savepoint";
    case stop_with_savepoint::phase::draining:
      return "draining";
  }
  return "?";
}

} // namespace weir
