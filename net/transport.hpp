#pragma once

#include <cstdint>
#include <functional>
#include <set>
#include <string>

#include <caf/fwd.hpp>
#include <caf/io/middleman_actor.hpp>

#include "net/settings.hpp"

namespace weir::net {

/// Starts the transport of `sys` (whose middleman is loaded, with CAF's
/// automatic connections off): from then on `publish` and `connect` open
/// guarded connections, with TLS when enabled. `log` gets one line per
/// refused connection. Fails (naming the key and file) when the TLS files
/// are unusable.
[[nodiscard]] caf::error start_transport(caf::actor_system& sys,
                           const transport_settings& settings,
                           std::function<void(const std::string&)> log);

/// Stops the transport's actors; before the actor system ends.
void stop_transport(caf::actor_system& sys);

/// Stops the transport of an actor system when it goes out of scope:
/// declare it right after the system.
class transport_scope {
public:
  explicit transport_scope(caf::actor_system& sys) : sys_(&sys) {
  }
  ~transport_scope() {
    stop_transport(*sys_);
  }
  transport_scope(const transport_scope&) = delete;
  transport_scope& operator=(const transport_scope&) = delete;

private:
  caf::actor_system* sys_;
};

/// The transport's middleman actor (CAF's interface: publish_atom,
/// connect_atom, unpublish_atom), or CAF's own when none was started.
caf::io::middleman_actor middleman_of(caf::actor_system& sys);

/// Listens for `whom` on addr:port through the transport; the bound port.
[[nodiscard]] caf::expected<uint16_t> publish(caf::actor_system& sys,
                                const caf::strong_actor_ptr& whom,
                                std::set<std::string> interface,
                                uint16_t port, const std::string& addr);

/// Why the last connection this process opened to host:port failed before
/// its handshakes were done ("TLS handshake failed: ..."), or empty.
std::string connection_failure(caf::actor_system& sys,
                               const std::string& host, uint16_t port);

/// Whether the process on `node` may act as a node of the cluster, such as
/// registering a TaskExecutor: with TLS only when its certificate's OU is
/// weir-node (a client certificate may use the CLI, nothing more); always
/// without TLS, and for this process's own actors.
bool may_act_as_node(caf::actor_system& sys, const caf::node_id& node);

/// Whether the transport of `sys` uses TLS.
bool uses_tls(caf::actor_system& sys);

} // namespace weir::net
