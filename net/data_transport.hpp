#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

#include <caf/expected.hpp>
#include <caf/io/accept_handle.hpp>
#include <caf/io/connection_handle.hpp>

namespace caf::io {
class abstract_broker;
} // namespace caf::io

namespace weir::net {

// A taskmanager's data port (docs/security.md § Data port): the transport's
// guarded connections (TLS when enabled, handshake deadline, cap on pending
// connections, bounded frames), carrying data frames (data_guard) to a
// broker of the caller's instead of BASP. Call these from that broker's
// own handlers (on the multiplexer), after start_transport.

/// Listens on addr:port (0: any free port) for `broker`: accepted
/// connections reach it as new_connection_msg. The handle and the bound
/// port, or why not (naming taskmanager.host and taskmanager.data.port).
[[nodiscard]] caf::expected<std::pair<caf::io::accept_handle, uint16_t>>
open_data_port(caf::io::abstract_broker& broker, uint16_t port,
               const std::string& addr);

/// Hands `broker` the connection on socket `fd`, which this process
/// dialled to host:port (dial_data_port); its handshakes must finish
/// within the handshake timeout from now.
caf::io::connection_handle add_data_connection(caf::io::abstract_broker& broker,
                                               int fd,
                                               const std::string& host,
                                               uint16_t port);

/// Connects to host:port, waiting at most `timeout`: the socket
/// (non-blocking), or one line saying why not. Blocks: call it off the
/// multiplexer.
[[nodiscard]] caf::expected<int> dial_data_port(const std::string& host,
                                                uint16_t port,
                                                std::chrono::milliseconds timeout);

} // namespace weir::net
