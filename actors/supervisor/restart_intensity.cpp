#include "actors/supervisor/restart_intensity.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "config/config.hpp"
#include "config/keys.hpp"

namespace weir {

supervision_options supervision_options::from(const configuration& cfg) {
  supervision_options s;
  s.max_restarts = static_cast<int>(
    cfg.get(keys::supervision_max_restarts));
  s.within = cfg.get(keys::supervision_within);
  return s;
}

restart_intensity::restart_intensity(int max_restarts,
                                     std::chrono::milliseconds within)
  : max_restarts_(max_restarts), within_(within) {
}

bool restart_intensity::on_crash(clock::time_point now) {
  while (!restarts_.empty() && now - restarts_.front() >= within_)
    restarts_.pop_front();
  if (static_cast<int>(restarts_.size()) >= max_restarts_)
    return false;
  restarts_.push_back(now);
  return true;
}

std::chrono::milliseconds restart_intensity::backoff() const {
  using std::chrono::milliseconds;
  if (recent() <= 1)
    return milliseconds{0};
  auto doublings = std::min(recent() - 2, 7); // 100 ms << 7 > 10 s
  return std::min(milliseconds{100} * (1 << doublings), milliseconds{10000});
}

std::string restart_intensity::describe() const {
  return fmt::format("{} restarts within {} ms", max_restarts_,
                     within_.count());
}

} // namespace weir
