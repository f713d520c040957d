// What the guard in front of CAF's BASP lets through, read by read.
#include <doctest/doctest.h>

#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "tests/basp_frames.hpp"
#include "net/basp_guard.hpp"
#include "net/log_limiter.hpp"
#include "messages/errors.hpp"

using weir::net::basp_guard;
using namespace weir::test::basp;

namespace {

std::string bytes(size_t n) {
  return std::string(n, 'x');
}

std::mt19937_64 rng{42};
const caf::node_id self_node = random_node(rng);
const caf::node_id peer_node = random_node(rng);

/// Why `err` refuses a read ("" for none); refusals are protocol
/// violations.
std::string reason(const caf::error& err) {
  if (!err)
    return {};
  CHECK(err.code() == static_cast<uint8_t>(weir::errc::protocol_violation));
  return weir::describe(err);
}

/// Feeds `frame` (a header and its payload) to `g` as BASP reads it: the
/// first refusal, or "".
std::string feed(basp_guard& g, const std::string& frame) {
  auto h = frame.substr(0, 32);
  if (auto why = g.check(h.data(), h.size()))
    return reason(why);
  if (frame.size() == 32)
    return {};
  auto p = frame.substr(32);
  auto why = g.check(p.data(), p.size());
  return reason(why);
}

/// An accepted connection whose client handshake got through.
basp_guard authenticated(uint32_t max_payload) {
  basp_guard g{basp_guard::side::accepted, max_payload, self_node};
  REQUIRE(feed(g, client_hello(peer_node)) == "");
  REQUIRE(g.handshake_seen());
  REQUIRE(g.peer() == peer_node);
  return g;
}

/// A direct message to actor 7 with type names `names`.
std::string message(const std::string& names, uint64_t mid = normal,
                    uint8_t stages = 0) {
  return direct(7, mid, message_payload(names, "", stages), 3);
}

} // namespace

TEST_CASE("an accepted connection must start with a client handshake with "
          "payload") {
  basp_guard g{basp_guard::side::accepted, 1 << 20};
  auto empty = header(client_handshake, 0);
  CHECK(reason(g.check(empty.data(), empty.size()))
        == "a handshake without payload");
  basp_guard g2{basp_guard::side::accepted, 1 << 20};
  auto early = header(direct_message, 10, normal, 0, 7);
  CHECK(reason(g2.check(early.data(), early.size()))
        == "operation 0x02 before the handshake");
  basp_guard g3{basp_guard::side::accepted, 1 << 20};
  auto huge = header(client_handshake, 1 << 17);
  CHECK(reason(g3.check(huge.data(), huge.size()))
        == "a handshake of 131072 bytes (at most 65536)");
  CHECK_FALSE(g3.handshake_seen());
}

TEST_CASE("a connection we opened must start with the server's handshake") {
  basp_guard g{basp_guard::side::connected, 1 << 20};
  auto client = header(client_handshake, 10);
  CHECK(reason(g.check(client.data(), client.size()))
        == "operation 0x01 before the handshake");
  basp_guard ok{basp_guard::side::connected, 1 << 20};
  auto p = serialized(peer_node, std::vector<std::string>{"weir"},
                      uint64_t{5}, std::set<std::string>{});
  auto server = header(server_handshake, static_cast<uint32_t>(p.size()),
                       version);
  CHECK_FALSE(ok.check(server.data(), server.size()));
  CHECK_FALSE(ok.handshake_seen()); // its payload is still due
  CHECK_FALSE(ok.check(p.data(), p.size()));
  CHECK(ok.handshake_seen());
  CHECK(ok.peer() == peer_node);
}

TEST_CASE("after the handshake: messages up to the limit, heartbeats, no "
          "empty handshakes, no unknown operations") {
  auto g = authenticated(1000);
  auto fits = message("@<>+@str", normal);
  fits += std::string(1000 - (fits.size() - 32), 'x');
  fits.replace(4, 4, std::string{0, 0, 0x03, static_cast<char>(0xe8)});
  CHECK(feed(g, fits) == "");
  auto beat = header(heartbeat, 0);
  CHECK_FALSE(g.check(beat.data(), beat.size()));
  auto over = header(direct_message, 1001, normal, 0, 7);
  CHECK(reason(g.check(over.data(), over.size()))
        == "a message of 1001 bytes exceeds rpc.max-message-size (1000 "
           "bytes)");
  auto g2 = authenticated(1000);
  auto empty = header(client_handshake, 0);
  CHECK(reason(g2.check(empty.data(), empty.size()))
        == "a handshake without payload");
  auto g3 = authenticated(1000);
  auto unknown = header(0x16, 5); // a TLS record on a plain port
  CHECK(reason(g3.check(unknown.data(), unknown.size()))
        == "not a weir peer (unknown operation 0x16)");
}

TEST_CASE("the 4 GiB header is refused before anything is allocated") {
  auto g = authenticated(256u << 20);
  auto h = header(direct_message, 0xfffffff0u, normal, 0, 7);
  CHECK(reason(g.check(h.data(), h.size()))
        == "a message of 4294967280 bytes exceeds rpc.max-message-size "
           "(268435456 bytes)");
}

TEST_CASE("reads must come as BASP asks for them") {
  auto g = authenticated(1000);
  auto h = header(direct_message, 10, normal, 0, 7);
  CHECK_FALSE(g.check(h.data(), h.size()));
  auto short_payload = bytes(9);
  CHECK(reason(g.check(short_payload.data(), short_payload.size()))
        == "read 9 bytes of a 10-byte payload");
  basp_guard g2{basp_guard::side::accepted, 1000};
  auto odd = bytes(31);
  CHECK(reason(g2.check(odd.data(), odd.size()))
        == "read 31 bytes where a 32-byte header was due");
}

TEST_CASE("messages of CAF's stream categories are refused: their handlers "
          "crashed on any other content") {
  for (auto [mid, name] : {std::pair{upstream, "upstream"},
                           std::pair{downstream, "downstream"}}) {
    auto g = authenticated(1 << 20);
    CHECK(feed(g, message("@<>", mid))
          == fmt::format("a direct message of the {} category", name));
  }
  auto g = authenticated(1 << 20);
  CHECK(feed(g, message("@<>", urgent)) == "");
  CHECK(feed(g, message("@<>+@str", normal)) == "");
  CHECK(feed(g, message("@<>+@error", normal | 0x8000000000000000)) == "");
}

TEST_CASE("CAF's system messages, forwarding stacks and link requests are "
          "refused") {
  for (auto names : {"@<>+@exit", "@<>+@down", "@<>+@atom+@timeout",
                     "@<>+@str+@message", "@<>+@group", "@<>+@actor"}) {
    auto g = authenticated(1 << 20);
    CHECK(feed(g, message(names))
          == fmt::format("a message carrying {}",
                         std::string{names}.substr(std::string{names}
                                                     .rfind('+') + 1)));
  }
  auto g = authenticated(1 << 20);
  CHECK(feed(g, message("@<>+@atom+@strong_actor_ptr"))
        == "a link or unlink request");
  auto g2 = authenticated(1 << 20);
  CHECK(feed(g2, message("@<>+@str", normal, 1))
        == "a message with a forwarding stack");
  auto g3 = authenticated(1 << 20);
  CHECK(feed(g3, message("weir::job_id")) == "a message of unknown form "
                                             "(weir::job_id)");
}

TEST_CASE("named receivers: only SpawnServ, only asked for its info") {
  auto spawn_serv = static_cast<uint64_t>(caf::atom("SpawnServ"));
  auto config_serv = static_cast<uint64_t>(caf::atom("ConfigServ"));
  auto query = message_payload("@<>+@atom+@atom+@str");
  auto g = authenticated(1 << 20);
  CHECK(feed(g, direct(spawn_serv, normal, query, 9, named_receiver_flag))
        == "");
  CHECK(feed(g, message("@<>+@atom+@str+@strong_actor_ptr+@str")) == "");
  std::mt19937_64 other_rng{3};
  auto routed_query = routed(peer_node, random_node(other_rng), spawn_serv,
                             normal, query);
  routed_query[3] = static_cast<char>(named_receiver_flag);
  CHECK(feed(g, routed_query) == "");
  auto g2 = authenticated(1 << 20);
  CHECK(feed(g2, direct(config_serv, normal, query, 9, named_receiver_flag))
        == "a direct message to a named receiver other than SpawnServ");
  auto g3 = authenticated(1 << 20);
  CHECK(feed(g3, direct(spawn_serv, normal, message_payload("@<>+@str"), 9,
                        named_receiver_flag))
        == "a message to SpawnServ other than its info query");
}

TEST_CASE("an accepted peer speaks only for its own node") {
  std::mt19937_64 other_rng{7};
  auto other = random_node(other_rng);
  auto payload = message_payload("@<>+@str");
  auto g = authenticated(1 << 20);
  CHECK(feed(g, routed(peer_node, other, 7, normal, payload)) == "");
  CHECK(feed(g, routed(other, self_node, 7, normal, payload))
        == "a routed message claiming to come from another node");
  auto g2 = authenticated(1 << 20);
  CHECK(feed(g2, routed(self_node, other, 7, normal, payload))
        == "a routed message claiming to come from this node");
  // A connection we opened (to the jobmanager) carries others' messages.
  basp_guard c{basp_guard::side::connected, 1 << 20, self_node};
  auto p = serialized(peer_node, std::vector<std::string>{"weir"},
                      uint64_t{5}, std::set<std::string>{});
  REQUIRE(feed(c, header(server_handshake, static_cast<uint32_t>(p.size()),
                         version)
                    + p)
          == "");
  CHECK(feed(c, routed(other, self_node, 7, normal, payload)) == "");
  CHECK(feed(c, routed(self_node, other, 7, normal, payload))
        == "a routed message claiming to come from this node");
}

TEST_CASE("handshakes: one node per connection, not this one; clients "
          "send no server handshake") {
  auto g = authenticated(1 << 20);
  CHECK(feed(g, client_hello(peer_node, select_connection_flag)) == "");
  std::mt19937_64 other_rng{9};
  CHECK(feed(g, client_hello(random_node(other_rng)))
        == "a second handshake naming another node");
  basp_guard g2{basp_guard::side::accepted, 1 << 20, self_node};
  CHECK(feed(g2, client_hello(self_node)) == "a handshake naming this node");
  auto g3 = authenticated(1 << 20);
  auto p = serialized(peer_node);
  CHECK(feed(g3, header(server_handshake, static_cast<uint32_t>(p.size()),
                        version)
                   + p)
        == "a server handshake after the handshake");
  basp_guard g4{basp_guard::side::accepted, 1 << 20, self_node};
  CHECK(feed(g4, header(client_handshake, 3) + "abc")
        == "a handshake naming no node");
}

TEST_CASE("headers: no unknown flags, padding or misplaced fields") {
  auto g = authenticated(1 << 20);
  CHECK(feed(g, header(heartbeat, 0, 0, 0, 0, 0x04))
        == "a heartbeat with flags 0x04");
  auto g2 = authenticated(1 << 20);
  auto padded = header(heartbeat, 0);
  padded[1] = 1;
  CHECK(feed(g2, padded) == "a heartbeat with padding that is not zero");
  auto g3 = authenticated(1 << 20);
  CHECK(feed(g3, header(heartbeat, 0, 0, 5, 0))
        == "a malformed heartbeat header");
  auto g4 = authenticated(1 << 20);
  CHECK(feed(g4, header(direct_message, 10, normal, 0, 0))
        == "a malformed direct message header");
  auto g5 = authenticated(1 << 20);
  CHECK(feed(g5, header(down_message, 10, 0, 0, 0))
        == "a malformed down message header");
}

TEST_CASE("refusals are logged once a second, with a count of the others") {
  weir::log_limiter limit;
  auto t0 = weir::log_limiter::clock::time_point{} + std::chrono::hours{1};
  CHECK(limit.admit("refused a", t0) == "refused a");
  CHECK_FALSE(limit.admit("refused b", t0 + std::chrono::milliseconds{10}));
  CHECK_FALSE(limit.admit("refused c", t0 + std::chrono::milliseconds{999}));
  CHECK(limit.admit("refused d", t0 + std::chrono::seconds{1})
        == "refused d (2 more like it in the last 1000 ms)");
  CHECK(limit.admit("refused e", t0 + std::chrono::seconds{3})
        == "refused e");
}
