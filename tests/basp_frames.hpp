#pragma once

// BASP 0.17.6 frames as a peer puts them on the wire, made by hand: the
// guard's unit test, the attacks of the security test and the fuzzer's
// seeds use them. Layout: caf/io/basp/header.hpp (32 bytes, network byte
// order), payloads as caf::binary_serializer writes them.

#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <caf/atom.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/node_id.hpp>

namespace weir::test::basp {

constexpr uint8_t server_handshake = 0, client_handshake = 1,
                  direct_message = 2, routed_message = 3, monitor_message = 4,
                  down_message = 5, heartbeat = 6;
constexpr uint8_t named_receiver_flag = 0x01, select_connection_flag = 0x02;
/// Message ids (operation data) of the four categories.
constexpr uint64_t urgent = 0, normal = 0x1000000000000000,
                   upstream = 0x2000000000000000,
                   downstream = 0x3000000000000000;
/// BASP's version, the operation data of a server handshake.
constexpr uint64_t version = 3;

inline void put_u64(std::string& out, size_t at, uint64_t x) {
  for (int i = 0; i < 8; ++i)
    out[at + i] = static_cast<char>(x >> (56 - 8 * i));
}

/// A 32-byte header.
inline std::string header(uint8_t operation, uint32_t payload,
                          uint64_t operation_data = 0,
                          uint64_t source_actor = 0, uint64_t dest_actor = 0,
                          uint8_t flags = 0) {
  std::string h(32, '\0');
  h[0] = static_cast<char>(operation);
  h[3] = static_cast<char>(flags);
  for (int i = 0; i < 4; ++i)
    h[4 + i] = static_cast<char>(payload >> (24 - 8 * i));
  put_u64(h, 8, operation_data);
  put_u64(h, 16, source_actor);
  put_u64(h, 24, dest_actor);
  return h;
}

/// What caf::binary_serializer writes for `xs...`.
template <class... Ts>
std::string serialized(Ts&&... xs) {
  std::vector<char> buf;
  caf::binary_serializer sink{nullptr, buf};
  if (sink(std::forward<Ts>(xs)...))
    throw std::runtime_error("cannot serialize");
  return {buf.begin(), buf.end()};
}

/// A node id no process has: a random process id and host hash.
inline caf::node_id random_node(std::mt19937_64& rng) {
  caf::node_id::default_data::host_id_type host;
  for (auto& byte : host)
    byte = static_cast<uint8_t>(rng());
  return caf::make_node_id(static_cast<uint32_t>(rng()), host);
}

/// A client handshake: its header and payload (the node's id).
inline std::string client_hello(const caf::node_id& node, uint8_t flags = 0) {
  auto payload = serialized(node);
  return header(client_handshake, static_cast<uint32_t>(payload.size()), 0, 0,
                0, flags)
         + payload;
}

/// A message payload of type names `names` ("@<>+..."), with `stages`
/// forwarding-stack entries claimed and `content` after the names.
inline std::string message_payload(const std::string& names,
                                   const std::string& content = {},
                                   uint8_t stages = 0) {
  std::string out(1, static_cast<char>(stages));
  uint16_t type_nr = 0;
  std::string name_copy = names;
  return out + serialized(type_nr, name_copy) + content;
}

/// A direct message to actor `dest` with message id `mid` and payload.
inline std::string direct(uint64_t dest, uint64_t mid,
                          const std::string& payload, uint64_t source = 0,
                          uint8_t flags = 0) {
  return header(direct_message, static_cast<uint32_t>(payload.size()), mid,
                source, dest, flags)
         + payload;
}

/// A routed message claiming to come from `from` (node) to `to`.
inline std::string routed(const caf::node_id& from, const caf::node_id& to,
                          uint64_t dest, uint64_t mid,
                          const std::string& payload, uint64_t source = 1) {
  auto body = serialized(from, to) + payload;
  return header(routed_message, static_cast<uint32_t>(body.size()), mid,
                source, dest)
         + body;
}


} // namespace weir::test::basp
