#include "actors/common/heartbeat_monitor.hpp"

#include "config/config.hpp"

namespace weir {

heartbeat_options heartbeat_options::from(const configuration& cfg) {
  heartbeat_options h;
  h.interval = cfg.duration("heartbeat.interval");
  h.timeout = cfg.duration("heartbeat.timeout");
  h.rpc_failure_threshold = static_cast<int>(
    cfg.integer("heartbeat.rpc-failure-threshold"));
  return h;
}

} // namespace weir
