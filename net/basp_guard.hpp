#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

namespace weir::net {

/// Checks what a peer sends before CAF's BASP reads it. CAF 0.17.6 trusts
/// the wire: a handshake header without payload crashes it, and a header
/// announcing a 4 GiB payload makes it allocate 4 GiB. The guard sees each
/// read exactly as BASP asked for it (a 32-byte header, then the payload
/// the header announced) and refuses, before BASP or any allocation:
/// unknown operations, handshakes without payload, anything before the
/// peer's handshake, handshakes over 64 KiB and messages over the limit.
/// Plain logic: the scribe (transport.cpp) feeds it and closes the
/// connection when it answers with a reason.
class basp_guard {
public:
  /// Who opened the connection: on an accepted one the peer must first
  /// send its client handshake, on one we opened its server handshake.
  enum class side { accepted, connected };

  static constexpr size_t header_size = 32;
  static constexpr uint32_t max_handshake_payload = 64 * 1024;

  basp_guard(side s, uint32_t max_payload);

  /// Checks the next read of `size` bytes; returns why the connection must
  /// be closed, or nothing.
  std::optional<std::string> check(const char* data, size_t size);

  /// Whether the peer's BASP handshake got through: the connection is then
  /// authenticated (after TLS, when enabled) and no longer pending.
  bool handshake_seen() const {
    return handshake_seen_;
  }

  uint32_t max_payload() const {
    return max_payload_;
  }

private:
  std::optional<std::string> check_header(const unsigned char* h);

  side side_;
  uint32_t max_payload_;
  /// Bytes of payload the last header announced; 0: a header comes next.
  uint32_t expected_payload_ = 0;
  /// The announced payload belongs to the peer's handshake.
  bool payload_is_handshake_ = false;
  bool handshake_seen_ = false;
};

} // namespace weir::net
