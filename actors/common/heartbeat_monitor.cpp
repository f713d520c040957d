#include "actors/common/heartbeat_monitor.hpp"

#include "config/config.hpp"
#include "config/keys.hpp"

namespace weir {

heartbeat_options heartbeat_options::from(const configuration& cfg) {
  heartbeat_options h;
  h.interval = cfg.get(keys::heartbeat_interval);
  h.timeout = cfg.get(keys::heartbeat_timeout);
  h.rpc_failure_threshold = static_cast<int>(
    cfg.get(keys::heartbeat_rpc_failure_threshold));
  return h;
}

} // namespace weir
