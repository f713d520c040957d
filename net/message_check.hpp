#pragma once

#include <cstddef>
#include <caf/error.hpp>
#include <caf/fwd.hpp>

namespace weir::net {

/// Reads a message a peer sent, before BASP does, as BASP will (its
/// forwarding stack and content with this process's types) but with a
/// proxy registry that makes no proxies and only notes the nodes the
/// message's actor handles name. BASP makes a proxy for every such node
/// and, for a node it has no connection to, a helper actor that asks that
/// node's SpawnServ and waits up to five minutes: made-up nodes in a
/// stream of messages would pile those up. In weir every process connects
/// to the jobmanager itself, so what an accepted peer sends names only its
/// own actors and this node's. Plain logic apart from CAF's deserializer;
/// the scribe (transport.cpp) calls it for accepted connections.
class message_check {
public:
  explicit message_check(caf::actor_system& sys) : sys_(sys) {
  }

  /// Checks the message payload `data` (a direct message's; with `routed`,
  /// a routed message's, which starts with its two nodes) from `peer`:
  /// none, or `errc::protocol_violation` saying why it is refused.
  [[nodiscard]] caf::error check(const char* data, size_t size,
                                   bool routed, const caf::node_id& peer);

private:
  caf::actor_system& sys_;
};

} // namespace weir::net
