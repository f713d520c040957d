#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include <caf/error.hpp>

#include "messages/data_frame.hpp"

namespace weir::net {

/// Checks what a peer sends on a data connection (a taskmanager's data
/// port) before the data service reads it, as basp_guard does for the RPC
/// port. It sees each read as the service asks for it (a 64-byte header,
/// then the payload it announced) and refuses:
/// - anything before the peer's hello, a hello over max_hello_size or not
///   of this protocol, a second hello;
/// - unknown frame kinds, reserved bytes that are not zero;
/// - payloads on ends, credits and backlogs, payloads over the message
///   limit (rpc.max-message-size), credits and backlogs that are not
///   positive 32-bit numbers.
/// Plain logic: the scribe (transport.cpp) feeds it and closes the
/// connection when it answers with an error.
class data_guard {
public:
  explicit data_guard(uint32_t max_payload) : max_payload_(max_payload) {
  }

  /// Checks the next read of `size` bytes: none, or
  /// `errc::protocol_violation` saying why the connection must close.
  [[nodiscard]] caf::error check(const char* data, size_t size);

  /// Whether the peer's hello got through: the connection is then
  /// authenticated (after TLS, when enabled) and no longer pending.
  bool hello_seen() const {
    return peer_.has_value();
  }

  /// The taskmanager the peer's hello named.
  const std::optional<resource_id>& peer() const {
    return peer_;
  }

  /// The payload size the last header announced; 0 when a header is due.
  uint32_t expected_payload() const {
    return expected_;
  }

private:
  uint32_t max_payload_;
  std::optional<frame_header> last_;
  uint32_t expected_ = 0;
  std::optional<resource_id> peer_;
};

} // namespace weir::net
