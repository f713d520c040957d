#pragma once

#include <cstddef>
#include <cstdint>

#include <caf/error.hpp>
#include <caf/node_id.hpp>

namespace weir::net {

/// Checks what a peer sends before CAF's BASP reads it, and lets through
/// only what weir itself sends. CAF 0.17.6 trusts the wire: a handshake
/// without payload or a message of the stream categories crashes it, a
/// header announcing 4 GiB makes it allocate 4 GiB, and a message may
/// claim to come from the receiving node's own actors or name CAF's
/// system messages (exit, down, link) that weir never sends over the wire.
/// The guard sees each read exactly as BASP asked for it (a 32-byte
/// header, then the payload the header announced) and refuses, before
/// BASP sees it (docs/security.md § The guard):
/// - anything before the peer's handshake, handshakes without payload or
///   over 64 KiB, a second handshake naming another node;
/// - unknown operations, flags and padding, and the fields CAF's header
///   check requires (operation data, actors, payload) out of place;
/// - messages of the upstream or downstream categories (CAF streams);
/// - messages with a forwarding stack, named receivers other than CAF's
///   SpawnServ (which every node asks once for its info), or contents of
///   CAF's system types;
/// - on an accepted connection, routed, monitor and down messages that do
///   not come from the peer's own node; on any, ones from this node;
/// - payloads over the message limit.
/// Plain logic: the scribe (transport.cpp) feeds it and closes the
/// connection when it answers with an error.
class basp_guard {
public:
  /// Who opened the connection: on an accepted one the peer must first
  /// send its client handshake, on one we opened its server handshake.
  enum class side { accepted, connected };

  static constexpr size_t header_size = 32;
  static constexpr uint32_t max_handshake_payload = 64 * 1024;
  /// BASP's routed_message operation.
  static constexpr uint8_t routed_operation = 0x03;

  /// `self`: this process's node (a peer never speaks for it).
  basp_guard(side s, uint32_t max_payload, caf::node_id self = {});

  /// Checks the next read of `size` bytes: none, or
  /// `errc::protocol_violation` whose context says why the connection
  /// must be closed.
  [[nodiscard]] caf::error check(const char* data, size_t size);

  /// Whether the peer's BASP handshake got through: the connection is then
  /// authenticated (after TLS, when enabled) and no longer pending.
  bool handshake_seen() const {
    return handshake_seen_;
  }

  /// The node the peer's handshake named (none before).
  const caf::node_id& peer() const {
    return peer_;
  }

  /// The payload size the last header announced; 0 when a header is due.
  uint32_t expected_payload() const {
    return expected_payload_;
  }

  uint32_t max_payload() const {
    return max_payload_;
  }

  /// What the read just checked was: a message's payload for an actor of
  /// this node (direct, or routed here), one for another node (routed
  /// on), or anything else.
  enum class payload { other, message_here, message_on };
  payload last_payload() const {
    return last_payload_;
  }

  /// Whether the message payload just checked came routed (it starts with
  /// its source and destination nodes).
  bool last_was_routed() const {
    return last_.operation == routed_operation;
  }

private:
  struct header {
    uint8_t operation;
    uint8_t padding1;
    uint8_t padding2;
    uint8_t flags;
    uint32_t payload;
    uint64_t operation_data;
    uint64_t source_actor;
    uint64_t dest_actor;
  };

  [[nodiscard]] caf::error check_header(const unsigned char* h);
  [[nodiscard]] caf::error check_fields(const header& h) const;
  [[nodiscard]] caf::error check_payload(const char* data, size_t size);
  [[nodiscard]] caf::error check_handshake(const char* data, size_t size);
  [[nodiscard]] caf::error check_nodes(const caf::node_id& source) const;

  side side_;
  uint32_t max_payload_;
  caf::node_id self_;
  caf::node_id peer_;
  /// The last header; its payload is due while expected_payload_ > 0.
  header last_{};
  uint32_t expected_payload_ = 0;
  payload last_payload_ = payload::other;
  bool handshake_seen_ = false;
};

} // namespace weir::net
