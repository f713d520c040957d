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
  auto& t = r.transport;
  t.tls = cfg.get(keys::ssl_internal_enabled);
  t.files.certificate = cfg.get(keys::ssl_internal_certificate);
  t.files.key = cfg.get(keys::ssl_internal_key);
  t.files.trust = cfg.get(keys::ssl_internal_trust);
  t.handshake_timeout = cfg.get(keys::ssl_internal_handshake_timeout);
  t.max_pending = static_cast<size_t>(cfg.get(keys::max_pending_connections));
  t.max_message_size
    = static_cast<uint32_t>(cfg.get(keys::rpc_max_message_size).mb << 20);
  t.max_pending_bytes
    = static_cast<size_t>(cfg.get(keys::rpc_max_pending_bytes).mb) << 20;
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
  // Every connection is one weir opened through its transport (TLS, the
  // guard in front of BASP): CAF's automatic connections would open a
  // plain listener on every interface and dial peers around the guard.
  // Workers' messages to each other go through the jobmanager's node.
  cfg.set("middleman.enable-automatic-connections", false);
  cfg.set("middleman.app-identifiers",
          std::vector<std::string>{"weir-" WEIR_VERSION "/" + r.cluster_id});
  cfg.set("middleman.heartbeat-interval", caf::timespan{r.heartbeat_interval});
  cfg.set("middleman.connection-timeout", caf::timespan{r.heartbeat_timeout});
  // BASP carries control messages only (batches use the data ports):
  // deserializing them on the multiplexer's thread saves a thread handoff
  // per message, and keeps a remote actor's down message behind the
  // messages it sent before (CAF 0.17 hands the down message over at once,
  // while a BASP worker may still be deserializing an earlier message).
  cfg.set("middleman.workers", size_t{0});
}

} // namespace weir
