#include "net/basp_guard.hpp"

#include <fmt/format.h>

namespace weir::net {

namespace {

// BASP 0.17.6's operations (caf/io/basp/message_type.hpp).
constexpr uint8_t server_handshake = 0x00;
constexpr uint8_t client_handshake = 0x01;
constexpr uint8_t heartbeat = 0x06;

uint32_t read_u32(const unsigned char* p) { // network byte order
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16)
         | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

} // namespace

basp_guard::basp_guard(side s, uint32_t max_payload)
  : side_(s), max_payload_(max_payload) {
  // nop
}

std::optional<std::string> basp_guard::check(const char* data, size_t size) {
  if (expected_payload_ > 0) {
    if (size != expected_payload_)
      return fmt::format("read {} bytes of a {}-byte payload", size,
                         expected_payload_);
    expected_payload_ = 0;
    if (payload_is_handshake_)
      handshake_seen_ = true;
    return std::nullopt;
  }
  if (size != header_size)
    return fmt::format("read {} bytes where a {}-byte header was due", size,
                       header_size);
  return check_header(reinterpret_cast<const unsigned char*>(data));
}

std::optional<std::string>
basp_guard::check_header(const unsigned char* h) {
  auto operation = h[0];
  auto payload = read_u32(h + 4);
  if (operation > heartbeat)
    return fmt::format("not a weir peer (unknown operation {:#04x})",
                       operation);
  bool handshake = operation == server_handshake
                   || operation == client_handshake;
  if (handshake && payload == 0)
    return "a handshake without payload";
  if (!handshake_seen_) {
    auto due = side_ == side::accepted ? client_handshake : server_handshake;
    if (operation != due)
      return fmt::format("operation {:#04x} before the handshake", operation);
    if (payload > max_handshake_payload)
      return fmt::format("a handshake of {} bytes (at most {})", payload,
                         max_handshake_payload);
  }
  if (payload > max_payload_)
    return fmt::format("a message of {} bytes exceeds rpc.max-message-size "
                       "({} bytes)",
                       payload, max_payload_);
  expected_payload_ = payload;
  payload_is_handshake_ = handshake && !handshake_seen_;
  return std::nullopt;
}

} // namespace weir::net
