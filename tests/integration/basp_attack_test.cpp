// Attacks on a jobmanager's RPC port by a peer that completed CAF's BASP
// handshake (without TLS anyone who reaches the port; with TLS any holder
// of a client certificate), through real processes on loopback. Each one
// crashed, exhausted or fooled a jobmanager before the guard knew what
// weir sends (docs/security.md § The guard); now each connection is
// closed, the jobmanager lives and its cluster runs jobs.
#include <doctest/doctest.h>

#include <poll.h>

#include <chrono>
#include <random>
#include <thread>
#include <regex>
#include <string>
#include <vector>

#include <caf/binary_deserializer.hpp>

#include "cluster_fixture.hpp"
#include "raw_peer.hpp"
#include "tests/basp_frames.hpp"

using namespace weir::test;
using namespace std::chrono_literals;
namespace basp = weir::test::basp;

namespace {

std::mt19937_64 rng{20261205};

/// A session cluster with one taskmanager, TLS with the node certificate
/// when `certs` is given.
struct target : session_cluster {
  const certificates* certs;

  explicit target(const certificates* c = nullptr,
                  std::vector<std::string> jm_extra = {})
    : session_cluster(with(c, any_rest_port(jm_extra)), with(c, {})),
      certs(c) {
    add_worker("tm-1", 1);
  }

  /// Not the default 8081: tests run side by side.
  static std::vector<std::string> any_rest_port(std::vector<std::string> f) {
    f.push_back("-Drest.port=0");
    return f;
  }

  static std::vector<std::string> with(const certificates* c,
                                       std::vector<std::string> extra) {
    if (c != nullptr)
      for (auto& flag : c->flags(c->ca, "node"))
        extra.push_back(flag);
    return extra;
  }

  /// A raw connection: with TLS, holding a node certificate (a client's
  /// is refused right after the TLS handshake: clients use the REST API),
  /// as a taskmanager's stolen key would.
  std::unique_ptr<raw_peer> connect(const std::string& role = "node") {
    return certs ? std::make_unique<raw_peer>(address, *certs, role)
                 : std::make_unique<raw_peer>(address);
  }

  /// A raw connection that completed BASP's handshake as a made-up node;
  /// `jm` gets the jobmanager's node from its server handshake.
  std::unique_ptr<raw_peer> handshaken(caf::node_id* jm = nullptr,
                                       caf::node_id as = {}) {
    auto peer = connect();
    auto h = peer->read(32);
    REQUIRE(h.size() == 32);
    REQUIRE(h[0] == basp::server_handshake);
    auto size = (uint32_t{static_cast<uint8_t>(h[4])} << 24)
                | (uint32_t{static_cast<uint8_t>(h[5])} << 16)
                | (uint32_t{static_cast<uint8_t>(h[6])} << 8)
                | uint32_t{static_cast<uint8_t>(h[7])};
    auto payload = peer->read(size);
    REQUIRE(payload.size() == size);
    if (jm != nullptr) {
      caf::binary_deserializer source{nullptr, payload.data(),
                                      payload.size()};
      REQUIRE_FALSE(source(*jm));
    }
    REQUIRE(peer->send(basp::client_hello(as ? as : basp::random_node(rng))));
    return peer;
  }

  /// The jobmanager is up and its cluster runs a job exactly.
  void still_serves() {
    CHECK(alive(jobmanager->pid()));
    std::vector<std::string> flags;
    if (certs)
      flags = certs->flags(certs->ca, "client");
    auto r = client({"run", "examples/collect.json", "--to", "4"}, flags);
    auto log = jobmanager->stderr_so_far();
    CHECK_MESSAGE(r.exit_code == 0,
                  r.err << "\njobmanager's log, last lines:\n"
                        << log.substr(log.size() - std::min<size_t>(log.size(),
                                                                    4000)));
    CHECK(r.out == "2\n4\n");
  }
};

/// The attack that crashed the jobmanager (SIGSEGV in CAF's downstream
/// queue): messages of the stream categories, empty, to actors 1..64.
void stream_categories(target& t) {
  for (int round = 0; round < 3; ++round) {
    for (auto category : {basp::downstream, basp::upstream}) {
      auto peer = t.handshaken();
      std::string frames;
      for (uint64_t actor = 1; actor <= 64; ++actor)
        frames += basp::direct(actor, category | actor,
                               basp::message_payload("@<>"), 1);
      peer->send(frames); // the connection may close while it sends
      CHECK(peer->closed_within(10s));
    }
  }
  CHECK(t.jobmanager->wait_for_stderr(
    "refused a connection from 127.0.0.1: a direct message of the "
    "downstream category",
    10s));
  t.still_serves();
}

/// Eight connections each announce a 255 MiB message and send none of it:
/// CAF allocated 255 MiB for each at once.
void announced_not_sent(target& t) {
  auto before = rss_kib(t.jobmanager->pid());
  std::vector<std::unique_ptr<raw_peer>> peers;
  for (int i = 0; i < 8; ++i) {
    peers.push_back(t.handshaken());
    CHECK(peers.back()->send(
      basp::header(basp::direct_message, 255u << 20, basp::normal, 1, 1)));
  }
  // A job's round trip through the jobmanager: it read all eight headers.
  t.still_serves();
  auto grown = rss_kib(t.jobmanager->pid()) - before;
  MESSAGE("8 announced 255 MiB messages: the jobmanager grew by " << grown
          << " KiB");
  CHECK(grown < 64 * 1024);
}

} // namespace

TEST_CASE("stream-category messages of a peer without TLS are refused; the "
          "jobmanager lives") {
  target t;
  stream_categories(t);
}

TEST_CASE("stream-category messages of a node certificate's holder are "
          "refused; the jobmanager lives") {
  certificates certs;
  target t{&certs};
  stream_categories(t);
}

TEST_CASE("with TLS the RPC port refuses a client certificate right after "
          "its handshake: clients use the REST API") {
  certificates certs;
  target t{&certs};
  auto peer = t.connect("client");
  peer->send(basp::client_hello(basp::random_node(rng)));
  CHECK(peer->closed_within(10s));
  CHECK(t.jobmanager->wait_for_stderr(
    "its certificate is not a node's (OU weir-client): clients use the REST "
    "API, the RPC port is for jobmanagers and taskmanagers "
    "(docs/security.md § Clients)",
    10s));
  t.still_serves();
}

TEST_CASE("announced messages take memory only as their bytes arrive, "
          "without TLS") {
  target t;
  announced_not_sent(t);
}

TEST_CASE("announced messages take memory only as their bytes arrive, "
          "with TLS") {
  certificates certs;
  target t{&certs};
  announced_not_sent(t);
}

TEST_CASE("rpc.max-pending-bytes bounds what all arriving messages hold") {
  target t{nullptr, {"-Drpc.max-pending-bytes=16m"}};
  auto peer = t.handshaken();
  peer->send(basp::header(basp::direct_message, 100u << 20, basp::normal, 1, 1)
             + std::string(20u << 20, 'x'));
  CHECK(peer->closed_within(10s));
  CHECK(t.jobmanager->wait_for_stderr(
    "refused a connection from 127.0.0.1: its message of 104857600 bytes "
    "would take the memory held for arriving messages past 16777216 bytes "
    "(rpc.max-pending-bytes)",
    10s));
  // The budget is back: a large message of another peer arrives whole (a
  // string to an actor that does not exist: dropped after the guard).
  auto other = t.handshaken();
  auto payload = basp::message_payload("@<>+@str",
                                       basp::serialized(std::string(
                                         4u << 20, 'y')));
  CHECK(other->send(basp::direct(999999, basp::normal, payload, 1)));
  t.still_serves();
  CHECK_FALSE(other->closed_within(1s));
}

TEST_CASE("a peer speaks only for itself: not for the jobmanager's node, "
          "nor for a taskmanager's, nor with handles of made-up nodes") {
  // A fresh cluster per subcase: refusals are logged once a second.
  target t;
  caf::node_id jm;
  auto peer = t.handshaken(&jm);
  SUBCASE("a routed message from the jobmanager's own node") {
    peer->send(basp::routed(jm, jm, 1, basp::normal,
                            basp::message_payload(
                              "@<>+@str", basp::serialized(std::string{"x"}))));
    CHECK(peer->closed_within(10s));
    CHECK(t.jobmanager->wait_for_stderr(
      "a routed message claiming to come from this node", 10s));
  }
  SUBCASE("a handle of a made-up node (CAF kept a proxy and a helper actor "
          "per node)") {
    peer->send(basp::direct(
      1, basp::normal,
      basp::message_payload("@<>+weir::task_executor_actor",
                            basp::serialized(uint64_t{5},
                                             basp::random_node(rng))),
      1));
    CHECK(peer->closed_within(10s));
    CHECK(t.jobmanager->wait_for_stderr(
      "which is neither this node nor the peer", 10s));
  }
  SUBCASE("a handshake naming the taskmanager's node (it would take its "
          "route)") {
    // A node id is the process id and the host's hash: the taskmanager's
    // is the jobmanager's with the taskmanager's pid.
    auto host = static_cast<const caf::node_id::default_data&>(*jm).host_id();
    auto tm = caf::make_node_id(static_cast<uint32_t>(t.workers[0]->pid()),
                                host);
    auto thief = t.handshaken(nullptr, tm);
    CHECK(thief->closed_within(10s));
    CHECK(t.jobmanager->wait_for_stderr(
      fmt::format("its handshake names node {}, which is connected already",
                  to_string(tm)),
      10s));
  }
  t.still_serves();
}

TEST_CASE("CAF's system messages from a peer never reach an actor") {
  target t;
  for (auto names : {"@<>+@exit", "@<>+@down", "@<>+@atom+@strong_actor_ptr"}) {
    auto peer = t.handshaken();
    std::string frames;
    for (uint64_t actor = 1; actor <= 64; ++actor)
      frames += basp::direct(actor, basp::normal,
                             basp::message_payload(names), 1);
    peer->send(frames);
    CHECK(peer->closed_within(10s));
  }
  t.still_serves();
  CHECK(t.jobmanager->stderr_so_far().find("restart")
        == std::string::npos); // no actor died and was restarted
}

TEST_CASE("random frames after a handshake never end the jobmanager") {
  target t;
  // Seeds of weir's own shapes, mutated byte by byte: a bounded black-box
  // fuzz of the whole process (the in-process fuzzer is fuzz/).
  std::vector<std::string> seeds{
    basp::direct(1, basp::normal, basp::message_payload("@<>+@str",
                                    basp::serialized(std::string{"x"})), 1),
    basp::direct(2, basp::urgent, basp::message_payload("@<>"), 1),
    basp::header(basp::heartbeat, 0),
    basp::header(basp::monitor_message, 40),
  };
  std::uniform_int_distribution<size_t> pick(0, seeds.size() - 1);
  int sent = 0;
  for (int connection = 0; connection < 150; ++connection) {
    auto peer = t.handshaken();
    for (int frame = 0; frame < 10; ++frame) {
      auto bytes = seeds[pick(rng)];
      auto flips = 1 + rng() % 4;
      for (size_t f = 0; f < flips; ++f)
        bytes[rng() % bytes.size()] = static_cast<char>(rng());
      ++sent;
      if (!peer->send(bytes))
        break;
    }
  }
  INFO(sent << " frames sent");
  t.still_serves();
}

namespace {

/// Listens on a free loopback port, relays one connection to `target`
/// and keeps what the client sent: a real client's BASP stream.
class recording_relay {
public:
  explicit recording_relay(const std::string& target) {
    listener_ = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
    REQUIRE(bind(listener_, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
    REQUIRE(listen(listener_, 4) == 0);
    socklen_t len = sizeof sa;
    getsockname(listener_, reinterpret_cast<sockaddr*>(&sa), &len);
    address_ = fmt::format("127.0.0.1:{}", ntohs(sa.sin_port));
    thread_ = std::thread{[this, target] { relay(target); }};
  }

  ~recording_relay() {
    if (thread_.joinable())
      thread_.join();
    ::close(listener_);
  }

  const std::string& address() const {
    return address_;
  }

  /// What the client sent, once its connection ended.
  std::string sent() {
    thread_.join();
    return sent_;
  }

private:
  void relay(const std::string& target) {
    int client = accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    int server = connect_to(target);
    pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
    char buf[65536];
    for (bool open = true; open;) {
      if (poll(fds, 2, 30000) <= 0)
        break;
      for (int i = 0; i < 2; ++i) {
        if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0)
          continue;
        auto n = ::recv(fds[i].fd, buf, sizeof buf, 0);
        if (n <= 0) {
          open = false;
          break;
        }
        if (i == 0)
          sent_.append(buf, static_cast<size_t>(n));
        ::send(fds[1 - i].fd, buf, static_cast<size_t>(n), MSG_NOSIGNAL);
      }
    }
    ::close(client);
    ::close(server);
  }

  int listener_ = -1;
  std::string address_;
  std::string sent_;
  std::thread thread_;
};

/// `stream` cut into its BASP frames (header and payload each).
std::vector<std::string> frames_of(const std::string& stream) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at + 32 <= stream.size()) {
    auto* h = reinterpret_cast<const unsigned char*>(stream.data() + at);
    size_t size = (size_t{h[4]} << 24) | (size_t{h[5]} << 16)
                  | (size_t{h[6]} << 8) | size_t{h[7]};
    if (at + 32 + size > stream.size())
      break;
    out.push_back(stream.substr(at, 32 + size));
    at += 32 + size;
  }
  return out;
}

} // namespace

TEST_CASE("a real taskmanager's messages, mutated, never end the "
          "jobmanager") {
  target t;
  // What a taskmanager sends as it registers and runs subtasks (clients
  // speak the REST API, not this protocol), recorded on its way.
  std::vector<std::vector<std::string>> streams;
  {
    recording_relay relay{t.address};
    running_process tm{{std::getenv("WEIR_BIN"), "taskmanager", "-m", relay.address(),
                        "--id", "recorded", "--slots", "4"}};
    REQUIRE(t.jobmanager->wait_for_stderr("TaskExecutor recorded registered",
                                          30s));
    // Two subtasks, one slot on tm-1: the job runs on the recorded one too.
    auto r = t.client({"run", "examples/collect.json", "--to", "4", "-p",
                       "2"});
    REQUIRE(r.exit_code == 0);
    tm.signal(SIGTERM);
    tm.finish(30s);
    auto frames = frames_of(relay.sent());
    REQUIRE(frames.size() > 1);
    REQUIRE(frames[0][0] == basp::client_handshake);
    streams.push_back(std::move(frames));
  }
  // Replayed, each time with a few bytes of one message changed: in its
  // payload (its content: weir's own types) or its header's ids.
  int replays = 0;
  for (int round = 0; round < 500; ++round) {
    for (auto& frames : streams) {
      auto peer = t.connect();
      peer->read(32); // the server's handshake header
      // As a node of its own: the node id the client sent (in its
      // handshake and its handles) replaced by a new one of the same size.
      auto old_node = frames[0].substr(32);
      auto new_node = basp::serialized(basp::random_node(rng));
      REQUIRE(new_node.size() == old_node.size());
      auto victim = 1 + static_cast<size_t>(round) % (frames.size() - 1);
      std::string bytes;
      for (size_t i = 0; i < frames.size(); ++i) {
        auto frame = frames[i];
        for (auto at = frame.find(old_node); at != std::string::npos;
             at = frame.find(old_node, at + 1))
          frame.replace(at, old_node.size(), new_node);
        for (auto flips = i == victim ? 1 + rng() % 3 : 0; flips > 0;
             --flips) {
          auto at = frame.size() > 32 && rng() % 4 != 0
                      ? 32 + rng() % (frame.size() - 32)
                      : 8 + rng() % 24; // operation data or actors
          frame[at] = static_cast<char>(rng());
        }
        bytes += frame;
      }
      peer->send(bytes); // refused or not, the next comes at once
      ++replays;
      // Each accepted session logs a registration and a loss.
      t.jobmanager->drain();
    }
  }
  MESSAGE(replays << " mutated taskmanager sessions replayed");
  t.still_serves();
}
