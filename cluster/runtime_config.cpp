#include "cluster/runtime_config.hpp"

#include <algorithm>
#include <thread>
#include <vector>

#include <caf/actor_system_config.hpp>
#include <caf/atom.hpp>
#include <caf/io/middleman.hpp>

#include "config/config.hpp"
#include "config/keys.hpp"
#include "messages/type_ids.hpp"

namespace weir {

remoting remoting::from(const configuration& cfg) {
  remoting r;
  r.cluster_id = cfg.get(keys::cluster_id);
  r.heartbeat_interval = cfg.get(keys::heartbeat_interval);
  r.heartbeat_timeout = cfg.get(keys::heartbeat_timeout);
  return r;
}

namespace {

constexpr size_t max_messages_per_run = 100;

} // namespace

void configure_actor_system(caf::actor_system_config& cfg) {
  add_message_types(cfg);
  auto cores = std::max(2u, std::thread::hardware_concurrency());
  cfg.set("scheduler.policy", caf::atom("sharing"));
  cfg.set("scheduler.max-threads", static_cast<size_t>(cores));
  // An actor gives its thread back after this many messages. CAF's default
  // (no limit) lets a source that keeps sending itself `produce` hold a
  // thread for as long as it has credit: with as many busy subtasks as
  // threads, the TaskExecutor's heartbeat replies waited seconds.
  cfg.set("scheduler.max-throughput", max_messages_per_run);
}

void configure_actor_system(caf::actor_system_config& cfg, const remoting& r) {
  configure_actor_system(cfg);
  cfg.load<caf::io::middleman>();
  // Workers talk directly once CAF has connected them (until then through
  // the jobmanager's node). Switching paths can reorder messages, which the
  // data plane tolerates: batches carry numbers and an end of partition the
  // count of batches before it (input_queue restores channel order).
  cfg.set("middleman.enable-automatic-connections", true);
  cfg.set("middleman.app-identifiers",
          std::vector<std::string>{"weir-" WEIR_VERSION "/" + r.cluster_id});
  cfg.set("middleman.heartbeat-interval", caf::timespan{r.heartbeat_interval});
  cfg.set("middleman.connection-timeout", caf::timespan{r.heartbeat_timeout});
}

} // namespace weir
