#include "cluster/runtime_config.hpp"

#include <algorithm>
#include <thread>

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/io/middleman.hpp>

#include "messages/type_ids.hpp"

namespace weir {

void configure_actor_system(caf::actor_system_config& cfg, bool remote,
                            const std::string& cluster_id) {
  add_message_types(cfg);
  if (remote) {
    cfg.load<caf::io::middleman>();
    // Subtasks on different workers talk directly instead of through the
    // jobmanager's node.
    cfg.set("middleman.enable-automatic-connections", true);
    cfg.set("middleman.app-identifiers",
            std::vector<std::string>{"weir-" WEIR_VERSION "/" + cluster_id});
  }
  auto cores = std::max(2u, std::thread::hardware_concurrency());
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("scheduler.max-threads", static_cast<size_t>(cores));
}

} // namespace weir
