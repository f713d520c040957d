// What the guard in front of CAF's BASP lets through, read by read.
#include <doctest/doctest.h>

#include <string>

#include "net/basp_guard.hpp"

using weir::net::basp_guard;

namespace {

/// A 32-byte BASP 0.17.6 header in network byte order.
std::string header(uint8_t operation, uint32_t payload) {
  std::string h(32, '\0');
  h[0] = static_cast<char>(operation);
  for (int i = 0; i < 4; ++i)
    h[4 + i] = static_cast<char>(payload >> (24 - 8 * i));
  return h;
}

std::string bytes(size_t n) {
  return std::string(n, 'x');
}

constexpr uint8_t server_handshake = 0, client_handshake = 1,
                  direct_message = 2, heartbeat = 6;

/// An accepted connection whose client handshake got through.
basp_guard authenticated(uint32_t max_payload) {
  basp_guard g{basp_guard::side::accepted, max_payload};
  auto h = header(client_handshake, 100);
  REQUIRE_FALSE(g.check(h.data(), h.size()));
  auto p = bytes(100);
  REQUIRE_FALSE(g.check(p.data(), p.size()));
  REQUIRE(g.handshake_seen());
  return g;
}

} // namespace

TEST_CASE("an accepted connection must start with a client handshake with "
          "payload") {
  basp_guard g{basp_guard::side::accepted, 1 << 20};
  auto empty = header(client_handshake, 0);
  CHECK(g.check(empty.data(), empty.size()) == "a handshake without payload");
  basp_guard g2{basp_guard::side::accepted, 1 << 20};
  auto early = header(direct_message, 10);
  CHECK(g2.check(early.data(), early.size())
        == "operation 0x02 before the handshake");
  basp_guard g3{basp_guard::side::accepted, 1 << 20};
  auto huge = header(client_handshake, 1 << 17);
  CHECK(g3.check(huge.data(), huge.size())
        == "a handshake of 131072 bytes (at most 65536)");
  CHECK_FALSE(g3.handshake_seen());
}

TEST_CASE("a connection we opened must start with the server's handshake") {
  basp_guard g{basp_guard::side::connected, 1 << 20};
  auto client = header(client_handshake, 10);
  CHECK(g.check(client.data(), client.size())
        == "operation 0x01 before the handshake");
  basp_guard ok{basp_guard::side::connected, 1 << 20};
  auto server = header(server_handshake, 10);
  CHECK_FALSE(ok.check(server.data(), server.size()));
  CHECK_FALSE(ok.handshake_seen()); // its payload is still due
  auto p = bytes(10);
  CHECK_FALSE(ok.check(p.data(), p.size()));
  CHECK(ok.handshake_seen());
}

TEST_CASE("after the handshake: messages up to the limit, heartbeats, no "
          "empty handshakes, no unknown operations") {
  auto g = authenticated(1000);
  auto fits = header(direct_message, 1000);
  CHECK_FALSE(g.check(fits.data(), fits.size()));
  auto p = bytes(1000);
  CHECK_FALSE(g.check(p.data(), p.size()));
  auto beat = header(heartbeat, 0);
  CHECK_FALSE(g.check(beat.data(), beat.size()));
  auto over = header(direct_message, 1001);
  CHECK(g.check(over.data(), over.size())
        == "a message of 1001 bytes exceeds rpc.max-message-size (1000 "
           "bytes)");
  auto g2 = authenticated(1000);
  auto empty = header(client_handshake, 0);
  CHECK(g2.check(empty.data(), empty.size()) == "a handshake without payload");
  auto g3 = authenticated(1000);
  auto unknown = header(0x16, 5); // a TLS record on a plain port
  CHECK(g3.check(unknown.data(), unknown.size())
        == "not a weir peer (unknown operation 0x16)");
}

TEST_CASE("the 4 GiB header is refused before anything is allocated") {
  auto g = authenticated(256u << 20);
  auto h = header(direct_message, 0xfffffff0u);
  CHECK(g.check(h.data(), h.size())
        == "a message of 4294967280 bytes exceeds rpc.max-message-size "
           "(268435456 bytes)");
}

TEST_CASE("reads must come as BASP asks for them") {
  auto g = authenticated(1000);
  auto h = header(direct_message, 10);
  CHECK_FALSE(g.check(h.data(), h.size()));
  auto short_payload = bytes(9);
  CHECK(g.check(short_payload.data(), short_payload.size())
        == "read 9 bytes of a 10-byte payload");
  basp_guard g2{basp_guard::side::accepted, 1000};
  auto odd = bytes(31);
  CHECK(g2.check(odd.data(), odd.size())
        == "read 31 bytes where a 32-byte header was due");
}
