#include "cluster/runtime_config.hpp"

#include <algorithm>
#include <thread>

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>

#include "messages/type_ids.hpp"

namespace weir {

void configure_actor_system(caf::actor_system_config& cfg) {
  add_message_types(cfg);
  auto cores = std::max(2u, std::thread::hardware_concurrency());
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("scheduler.max-threads", static_cast<size_t>(cores));
}

} // namespace weir
