#include "net/basp_guard.hpp"

#include <algorithm>
#include <array>

#include <caf/atom.hpp>
#include <caf/binary_deserializer.hpp>

#include <fmt/format.h>

#include "messages/errors.hpp"

namespace weir::net {

namespace {

/// Why a connection is closed.
caf::error refusal(std::string why) {
  return make_error(errc::protocol_violation, std::move(why));
}

// BASP 0.17.6's operations and flags (caf/io/basp/message_type.hpp,
// header.hpp) and message id bits (caf/message_id.hpp).
constexpr uint8_t server_handshake = 0x00;
constexpr uint8_t client_handshake = 0x01;
constexpr uint8_t direct_message = 0x02;
constexpr uint8_t routed_message = basp_guard::routed_operation;
constexpr uint8_t monitor_message = 0x04;
constexpr uint8_t down_message = 0x05;
constexpr uint8_t heartbeat = 0x06;
constexpr uint8_t named_receiver_flag = 0x01;
constexpr uint8_t select_connection_flag = 0x02;
constexpr uint64_t category_mask = 0x3000000000000000;
constexpr int category_offset = 60;
constexpr uint64_t normal_category = 1;

/// The one named receiver weir's nodes address: every node asks each node
/// it learns of for its SpawnServ's info (sys_atom, get_atom, "info").
const uint64_t spawn_server = static_cast<uint64_t>(caf::atom("SpawnServ"));
constexpr const char* spawn_server_query = "@<>+@atom+@atom+@str";

/// CAF's types that weir never sends over the wire and that CAF acts on
/// when they arrive: exits and downs end or confuse actors, stream
/// messages crash them, timeouts fire behaviours, groups dial other
/// hosts, nested messages hide any of these; weir's handles are typed.
constexpr std::array<const char*, 15> refused_types{
  "@exit",         "@down",           "@group_down",     "@timeout",
  "@open_stream_msg", "@upstream_msg", "@downstream_msg", "@message",
  "@group",        "@actor",          "@addr",           "@actorvec",
  "@addrvec",      "@weak_actor_ptr", "@strong_actor_ptr"};

/// SpawnServ's answer to that query: its handle and name.
constexpr const char* spawn_server_info = "@<>+@atom+@str+@strong_actor_ptr+@str";

uint32_t read_u32(const unsigned char* p) { // network byte order
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16)
         | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

uint64_t read_u64(const unsigned char* p) {
  return (uint64_t{read_u32(p)} << 32) | read_u32(p + 4);
}

const char* operation_name(uint8_t op) {
  switch (op) {
    case server_handshake:
      return "server handshake";
    case client_handshake:
      return "client handshake";
    case direct_message:
      return "direct message";
    case routed_message:
      return "routed message";
    case monitor_message:
      return "monitor message";
    case down_message:
      return "down message";
    default:
      return "heartbeat";
  }
}

/// Why the type names of a message's content (CAF's "@<>+T1+T2...") are
/// refused, or nothing.
caf::error check_type_names(const std::string& names) {
  if (names == "@<>")
    return caf::none; // an empty message: a void response
  if (names.compare(0, 4, "@<>+") != 0)
    return refusal(fmt::format("a message of unknown form ({:.40})", names));
  if (names == "@<>+@atom+@strong_actor_ptr")
    return refusal("a link or unlink request"); // BASP acts on these itself
  if (names == spawn_server_info)
    return caf::none;
  size_t begin = 4;
  while (begin <= names.size()) {
    auto end = std::min(names.find('+', begin), names.size());
    auto name = names.substr(begin, end - begin);
    for (auto* refused : refused_types)
      if (name == refused)
        return refusal(fmt::format("a message carrying {}", name));
    begin = end + 1;
  }
  return caf::none;
}

} // namespace

basp_guard::basp_guard(side s, uint32_t max_payload, caf::node_id self)
  : side_(s), max_payload_(max_payload), self_(std::move(self)) {
  // nop
}

caf::error basp_guard::check(const char* data, size_t size) {
  last_payload_ = payload::other;
  if (expected_payload_ > 0) {
    if (size != expected_payload_)
      return refusal(fmt::format("read {} bytes of a {}-byte payload", size,
                                 expected_payload_));
    expected_payload_ = 0;
    return check_payload(data, size);
  }
  if (size != header_size)
    return refusal(fmt::format("read {} bytes where a {}-byte header was due",
                               size, header_size));
  return check_header(reinterpret_cast<const unsigned char*>(data));
}

caf::error
basp_guard::check_header(const unsigned char* p) {
  header h{p[0],           p[1],           p[2],           p[3],
           read_u32(p + 4), read_u64(p + 8), read_u64(p + 16), read_u64(p + 24)};
  if (h.operation > heartbeat)
    return refusal(fmt::format("not a weir peer (unknown operation {:#04x})",
                               h.operation));
  bool handshake = h.operation == server_handshake
                   || h.operation == client_handshake;
  if (handshake && h.payload == 0)
    return refusal("a handshake without payload");
  // Only the client handshake may come again (CAF repeats it to select
  // the connection), and only from the peer that dialed.
  auto due = side_ == side::accepted ? client_handshake : server_handshake;
  if (!handshake_seen_ && h.operation != due)
    return refusal(
      fmt::format("operation {:#04x} before the handshake", h.operation));
  if (handshake_seen_ && handshake
      && (h.operation != due || side_ == side::connected))
    return refusal(fmt::format("a {} after the handshake",
                               operation_name(h.operation)));
  if (handshake && h.payload > max_handshake_payload)
    return refusal(fmt::format("a handshake of {} bytes (at most {})",
                               h.payload, max_handshake_payload));
  if (h.payload > max_payload_)
    return refusal(fmt::format("a message of {} bytes exceeds "
                               "rpc.max-message-size ({} bytes)",
                               h.payload, max_payload_));
  if (auto why = check_fields(h))
    return why;
  last_ = h;
  expected_payload_ = h.payload;
  return caf::none;
}

caf::error basp_guard::check_fields(const header& h) const {
  auto op = operation_name(h.operation);
  if (h.padding1 != 0 || h.padding2 != 0)
    return refusal(fmt::format("a {} with padding that is not zero", op));
  // A node asks every node it learns of for its SpawnServ's info, routed
  // through the jobmanager when it learned of it from a handle.
  uint8_t allowed_flags = h.operation == client_handshake ? select_connection_flag
                          : h.operation == direct_message
                              || h.operation == routed_message
                            ? named_receiver_flag
                            : 0;
  if ((h.flags & ~allowed_flags) != 0)
    return refusal(fmt::format("a {} with flags {:#04x}", op, h.flags));
  // CAF's own checks (caf/io/basp/header.cpp), which it makes only after
  // reading the payload these headers announce.
  bool fits = true;
  switch (h.operation) {
    case server_handshake:
      fits = h.operation_data != 0;
      break;
    case client_handshake:
      fits = h.source_actor == 0 && h.dest_actor == 0;
      break;
    case direct_message:
    case routed_message:
      fits = h.dest_actor != 0 && h.payload != 0;
      break;
    case monitor_message:
      fits = h.payload != 0 && h.operation_data == 0;
      break;
    case down_message:
      fits = h.source_actor != 0 && h.dest_actor == 0 && h.payload != 0
             && h.operation_data == 0;
      break;
    default: // heartbeat
      fits = h.source_actor == 0 && h.dest_actor == 0 && h.payload == 0
             && h.operation_data == 0;
  }
  if (!fits)
    return refusal(fmt::format("a malformed {} header", op));
  if (h.operation == direct_message || h.operation == routed_message) {
    // Urgent and normal messages only: the upstream and downstream
    // categories belong to CAF streams, whose handlers crash on anything
    // but a stream message.
    auto category = (h.operation_data & category_mask) >> category_offset;
    if (category > normal_category)
      return refusal(fmt::format("a {} of the {} category", op,
                                 category == 2 ? "upstream" : "downstream"));
    if ((h.flags & named_receiver_flag) != 0 && h.dest_actor != spawn_server)
      return refusal(
        fmt::format("a {} to a named receiver other than SpawnServ", op));
  }
  return caf::none;
}

caf::error basp_guard::check_payload(const char* data,
                                                     size_t size) {
  auto op = last_.operation;
  if (op == server_handshake || op == client_handshake)
    return check_handshake(data, size);
  caf::binary_deserializer source{nullptr, data, size};
  bool here = true;
  if (op == routed_message || op == monitor_message || op == down_message) {
    caf::node_id from;
    caf::node_id to;
    if (source(from, to))
      return refusal(fmt::format("a {} without its nodes", operation_name(op)));
    if (auto why = check_nodes(from))
      return why;
    here = !self_ || to == self_;
  }
  if (op != direct_message && op != routed_message)
    return caf::none;
  size_t stages = 0;
  if (source.begin_sequence(stages))
    return refusal("a message cut short");
  if (stages != 0)
    return refusal("a message with a forwarding stack");
  uint16_t type_nr = 0;
  std::string names;
  if (source.begin_object(type_nr, names) || type_nr != 0)
    return refusal("a message without its type names");
  if ((last_.flags & named_receiver_flag) != 0 && names != spawn_server_query)
    return refusal("a message to SpawnServ other than its info query");
  if (auto why = check_type_names(names))
    return why;
  last_payload_ = here ? payload::message_here : payload::message_on;
  return caf::none;
}

caf::error basp_guard::check_handshake(const char* data,
                                                       size_t size) {
  caf::binary_deserializer source{nullptr, data, size};
  caf::node_id node;
  if (source(node) || !node)
    return refusal("a handshake naming no node");
  if (handshake_seen_) {
    if (node != peer_)
      return refusal("a second handshake naming another node");
    return caf::none;
  }
  if (side_ == side::accepted && self_ && node == self_)
    return refusal("a handshake naming this node");
  peer_ = std::move(node);
  handshake_seen_ = true;
  return caf::none;
}

caf::error
basp_guard::check_nodes(const caf::node_id& source) const {
  auto op = operation_name(last_.operation);
  if (self_ && source == self_)
    return refusal(fmt::format("a {} claiming to come from this node", op));
  // Every node connects to the jobmanager itself: what arrives on an
  // accepted connection comes from the node that dialed it.
  if (side_ == side::accepted && source != peer_)
    return refusal(fmt::format("a {} claiming to come from another node", op));
  return caf::none;
}

} // namespace weir::net
