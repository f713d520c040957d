#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace weir::net {

/// The PEM files of security.ssl.internal.* (or of security.ssl.rest.*:
/// `keys` names them in errors).
struct tls_files {
  std::string certificate;
  std::string key;
  std::string trust;
  /// The keys' common prefix, for errors.
  std::string keys = "security.ssl.internal";
  /// Whether peers must show a certificate that chains to `trust` (the
  /// REST API without client authentication needs no `trust`).
  bool verify_peers = true;
};

/// How a process's connections are guarded (security.*, rpc.*).
struct transport_settings {
  /// security.ssl.internal.enabled and its PEM files.
  bool tls = false;
  tls_files files;
  /// This process is a node (a jobmanager or taskmanager): with TLS its
  /// own certificate must be a node certificate, or every peer refuses it.
  bool node = false;
  /// security.ssl.internal.handshake-timeout: an accepted connection must
  /// finish its handshakes (TLS, then BASP's) within this.
  std::chrono::milliseconds handshake_timeout{5000};
  /// security.max-pending-connections: accepted connections in their
  /// handshake at once; more are closed at once.
  size_t max_pending = 256;
  /// rpc.max-message-size, in bytes.
  uint32_t max_message_size = 256u << 20;
  /// rpc.max-pending-bytes: memory all connections together may hold for
  /// messages still arriving, in bytes.
  size_t max_pending_bytes = size_t{1} << 30;
};

} // namespace weir::net
