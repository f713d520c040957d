#pragma once

#include <chrono>
#include <string>

#include "net/settings.hpp"

namespace caf {
class actor_system_config;
} // namespace caf

namespace weir {

class configuration;

/// How a process of a session cluster talks to the others.
struct remoting {
  /// high-availability.cluster-id: with weir's version, CAF's application
  /// identifier, so peers of another cluster or version are refused during
  /// the connection handshake.
  std::string cluster_id = "default";
  /// heartbeat.interval and heartbeat.timeout: CAF's connection heartbeats
  /// (middleman.heartbeat-interval / connection-timeout), set alike on every
  /// node. A peer silent for the timeout (a stopped or hung process, a cut
  /// link) is dropped, which everyone monitoring its actors sees as a down
  /// message. The middleman sends them from its own thread, so a node busy
  /// with its subtasks is not mistaken for a dead one.
  std::chrono::milliseconds heartbeat_interval{200};
  std::chrono::milliseconds heartbeat_timeout{1000};
  /// security.* and rpc.max-message-size: TLS and the guard in front of
  /// CAF's protocol (net/transport.hpp).
  net::transport_settings transport;

  /// Reads the keys above.
  static remoting from(const configuration& cfg);
};

/// Registers weir's message types and sets weir's scheduler defaults:
/// `scheduler.policy = sharing` and one worker thread per core. CAF's
/// work-stealing workers poll while idle and took CPU away from the
/// detached file-reading subtasks (word count: 95 MB/s with stealing,
/// 138 MB/s with sharing on 2 cores; see docs/configuration.md).
void configure_actor_system(caf::actor_system_config& cfg);

/// As above, and loads CAF's middleman (BASP over TCP) for the processes of
/// a session cluster and remote clients.
void configure_actor_system(caf::actor_system_config& cfg, const remoting& r);

} // namespace weir
