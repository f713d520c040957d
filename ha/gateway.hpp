#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "messages/cluster_gateway.hpp"
#include "messages/supervisor.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace weir {

/// Spawns the gateway a jobmanager publishes on its port. It answers
/// lookups with the supervisor's current Dispatcher and ResourceManager, so
/// restarted ones are found by whoever looks them up again.
cluster_gateway_actor spawn_gateway(caf::actor_system& sys,
                                    supervisor_actor supervisor);

/// A "host:port" address: of a jobmanager, or of an etcd member that names
/// the leading jobmanager (high-availability.type: etcd).
struct endpoint {
  std::string host;
  uint16_t port = 0;
  bool etcd = false;
};

/// The scheme of etcd addresses: "etcd://HOST:PORT[,HOST:PORT...]".
constexpr std::string_view etcd_scheme = "etcd://";

/// Parses "HOST:PORT"; nothing for anything else.
std::optional<endpoint> parse_endpoint(const std::string& text);

/// Parses "HOST:PORT[,HOST:PORT...]" (a leader and its standbys) or
/// "etcd://HOST:PORT[,HOST:PORT...]" (etcd members: the leader is the one
/// they name); nothing when any part is malformed.
std::optional<std::vector<endpoint>> parse_endpoints(const std::string& text);

/// The URL of the REST API of cluster `cluster_id`'s leader, as the etcd
/// members `members` name it; `errc::timeout` (one line) while none leads
/// or the leader has no REST API.
[[nodiscard]] caf::expected<std::string> rest_leader_of(const std::vector<endpoint>& members,
                                          std::chrono::milliseconds timeout,
                                          const std::string& cluster_id);

/// Connects to the gateway a jobmanager publishes at `at` (non-blocking
/// connect with a deadline, so a silent peer cannot hang the caller) and
/// looks up its Dispatcher and ResourceManager. The actor system must have
/// CAF's middleman loaded.
[[nodiscard]] caf::expected<std::pair<dispatcher_actor, resource_manager_actor>>
connect_gateway(caf::actor_system& sys, const endpoint& at,
                std::chrono::milliseconds timeout);

/// Tries each address in turn (the leader is whichever answers); the error
/// of the last one when none does. etcd addresses are asked for the address
/// of cluster `cluster_id`'s leader first.
[[nodiscard]] caf::expected<std::pair<dispatcher_actor, resource_manager_actor>>
connect_gateway(caf::actor_system& sys, const std::vector<endpoint>& any_of,
                std::chrono::milliseconds timeout,
                const std::string& cluster_id);

} // namespace weir
