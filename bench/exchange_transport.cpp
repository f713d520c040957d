// (w) The data path between two taskmanagers, measured three ways over
// loopback TCP between two processes, to choose the transport of direct
// taskmanager-to-taskmanager exchange (docs/architecture.md § Data plane):
//   tcp     the bytes alone, 128 KiB writes: the wire's ceiling;
//   framed  row batches in their binary form (messages/row_batch.hpp
//           encode/decode), length-prefixed, decoded into batches on the
//           other side, with credit-based flow control (4 credits);
//   caf     the same batches as messages from an actor of one process to an
//           actor of the other over weir's guarded CAF transport, a direct
//           connection (no jobmanager in between), 4 requests in flight.
// Each moves MIB mebibytes of 3-int64-column batches of ~128 KiB and
// prints one JSON line: MiB/s of each, and framed and caf as ratios to tcp.
// Usage: bench_exchange_transport [MIB] [tcp]; with `tcp` it measures
// (and prints) TCP alone: bench f's reference for the wire's speed.
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include <fmt/format.h>

#include "api/cluster.hpp"
#include "messages/errors.hpp"
#include "messages/row_batch.hpp"
#include "net/transport.hpp"

namespace {

using clock_type = std::chrono::steady_clock;

constexpr size_t chunk = 128 * 1024;
constexpr size_t rows_per_batch = chunk / 24; // 3 int64 columns
constexpr int credits = 4;

weir::row_batch make_batch(int64_t first) {
  weir::schema s{{{"a", weir::field_type::int64, false},
                  {"b", weir::field_type::int64, false},
                  {"c", weir::field_type::int64, false}}};
  weir::row_batch b{s};
  for (size_t i = 0; i < rows_per_batch; ++i)
    for (auto& c : b.columns)
      c.push_int(first + static_cast<int64_t>(i));
  b.rows = rows_per_batch;
  return b;
}

void die(const std::string& what) {
  fmt::print(stderr, "bench_exchange_transport: {}: {}\n", what,
             std::strerror(errno));
  std::exit(1);
}

bool write_all(int fd, const void* p, size_t n) {
  auto* c = static_cast<const char*>(p);
  while (n > 0) {
    auto k = ::write(fd, c, n);
    if (k <= 0)
      return false;
    c += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

bool read_all(int fd, void* p, size_t n) {
  auto* c = static_cast<char*>(p);
  while (n > 0) {
    auto k = ::read(fd, c, n);
    if (k <= 0)
      return false;
    c += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

/// A listening socket on 127.0.0.1 (any port) and its port.
std::pair<int, uint16_t> listen_loopback() {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0
      || ::listen(fd, 1) != 0
      || ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    die("listen");
  return {fd, ntohs(a.sin_port)};
}

int accept_one(int lfd) {
  int fd = ::accept4(lfd, nullptr, nullptr, SOCK_CLOEXEC);
  if (fd < 0)
    die("accept");
  // Credits are single bytes: Nagle would hold them back.
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

int connect_loopback(uint16_t port) {
  int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  a.sin_port = htons(port);
  if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0)
    die("connect");
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

/// Runs `receive(port_pipe, await)` here and `send(port)` in a child that
/// learns the port from the pipe; the child reports its seconds from first
/// send to last acknowledgement, which this returns (`await()` waits for
/// that report, for a receiver that must outlive the sender).
double run_pair(
  const std::function<void(int port_out, const std::function<void()>& await)>&
    receive,
  const std::function<double(uint16_t port)>& send) {
  int ports[2];
  int result[2];
  if (::pipe2(ports, O_CLOEXEC) != 0 || ::pipe2(result, O_CLOEXEC) != 0)
    die("pipe");
  auto child = ::fork();
  if (child < 0)
    die("fork");
  if (child == 0) {
    uint16_t port = 0;
    if (!read_all(ports[0], &port, sizeof port))
      std::_Exit(1);
    double seconds = send(port);
    write_all(result[1], &seconds, sizeof seconds);
    std::_Exit(0);
  }
  double seconds = -1;
  bool reported = false;
  auto await = [&] {
    if (!reported)
      read_all(result[0], &seconds, sizeof seconds);
    reported = true;
  };
  receive(ports[1], await);
  await();
  int status = 0;
  ::waitpid(child, &status, 0);
  for (int fd : {ports[0], ports[1], result[0], result[1]})
    ::close(fd);
  return seconds;
}

double tcp(size_t total) {
  return run_pair(
    [&](int port_out, const std::function<void()>&) {
      auto [lfd, port] = listen_loopback();
      write_all(port_out, &port, sizeof port);
      int fd = accept_one(lfd);
      std::vector<char> buf(chunk);
      size_t got = 0;
      while (got < total) {
        auto k = ::read(fd, buf.data(), buf.size());
        if (k <= 0)
          break;
        got += static_cast<size_t>(k);
      }
      char ack = 1;
      write_all(fd, &ack, 1);
      ::close(fd);
      ::close(lfd);
    },
    [&](uint16_t port) {
      int fd = connect_loopback(port);
      std::vector<char> buf(chunk, 'x');
      auto t0 = clock_type::now();
      for (size_t sent = 0; sent < total; sent += chunk)
        write_all(fd, buf.data(), buf.size());
      char ack = 0;
      read_all(fd, &ack, 1);
      return std::chrono::duration<double>(clock_type::now() - t0).count();
    });
}

double framed(size_t batches) {
  return run_pair(
    [&](int port_out, const std::function<void()>&) {
      auto [lfd, port] = listen_loopback();
      write_all(port_out, &port, sizeof port);
      int fd = accept_one(lfd);
      std::string bytes;
      size_t rows = 0;
      for (size_t i = 0; i < batches; ++i) {
        uint32_t n = 0;
        if (!read_all(fd, &n, sizeof n))
          break;
        bytes.resize(n);
        if (!read_all(fd, bytes.data(), n))
          break;
        weir::row_batch b;
        if (!weir::decode(bytes, b))
          die("decode");
        rows += b.rows;
        char credit = 1;
        write_all(fd, &credit, 1);
      }
      if (rows != batches * rows_per_batch)
        die("framed: rows lost");
      ::close(fd);
      ::close(lfd);
    },
    [&](uint16_t port) {
      int fd = connect_loopback(port);
      auto t0 = clock_type::now();
      int available = credits;
      std::string bytes;
      for (size_t i = 0; i < batches; ++i) {
        if (available == 0) {
          char credit = 0;
          read_all(fd, &credit, 1);
          ++available;
        }
        // Built and encoded per batch, as a producer would, into one
        // buffer (a transport of its own would use its pool's buffers).
        weir::encode_into(make_batch(static_cast<int64_t>(i)), bytes);
        auto n = static_cast<uint32_t>(bytes.size());
        write_all(fd, &n, sizeof n);
        write_all(fd, bytes.data(), bytes.size());
        --available;
      }
      for (; available < credits; ++available) {
        char credit = 0;
        read_all(fd, &credit, 1);
      }
      return std::chrono::duration<double>(clock_type::now() - t0).count();
    });
}

/// An actor system with weir's message types and guarded transport.
struct remote_system {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<weir::remote_access> access;

  remote_system() {
    if (auto err = weir::prepare_remote_actor_system(cfg))
      die(weir::describe(err));
    sys = std::make_unique<caf::actor_system>(cfg);
    auto a = weir::remote_access::start(*sys);
    if (!a)
      die(weir::describe(a.error()));
    access = std::move(*a);
  }
  ~remote_system() {
    access.reset();
  }
};

double caf_direct(size_t batches) {
  return run_pair(
    [&](int port_out, const std::function<void()>& await) {
      remote_system rs;
      std::atomic<size_t> rows{0};
      auto receiver = rs.sys->spawn([&](caf::event_based_actor*) {
        return caf::behavior{[&](weir::row_batch& b) {
          rows += b.rows;
          return int32_t{1};
        }};
      });
      auto port = weir::net::publish(
        *rs.sys, caf::actor_cast<caf::strong_actor_ptr>(receiver), {}, 0,
        "127.0.0.1");
      if (!port)
        die(weir::describe(port.error()));
      uint16_t p = *port;
      write_all(port_out, &p, sizeof p);
      await(); // the sender reports after the last reply reached it
      if (rows != batches * rows_per_batch)
        die("caf: rows lost");
      caf::anon_send_exit(receiver, caf::exit_reason::user_shutdown);
    },
    [&](uint16_t port) {
      remote_system rs;
      caf::scoped_actor self{*rs.sys};
      caf::strong_actor_ptr peer;
      self
        ->request(weir::net::middleman_of(*rs.sys), std::chrono::seconds(10),
                  caf::connect_atom::value, std::string{"127.0.0.1"}, port)
        .receive([&](const caf::node_id&, caf::strong_actor_ptr& ptr,
                     const std::set<std::string>&) { peer = ptr; },
                 [&](caf::error& err) { die(rs.sys->render(err)); });
      auto receiver = caf::actor_cast<caf::actor>(peer);
      auto t0 = clock_type::now();
      size_t in_flight = 0;
      for (size_t i = 0; i < batches; ++i) {
        if (in_flight == static_cast<size_t>(credits)) {
          self->receive([](int32_t) {});
          --in_flight;
        }
        self->send(receiver, make_batch(static_cast<int64_t>(i)));
        ++in_flight;
      }
      // Replies come back as messages to `self` (send + a reply handler
      // per message would serialize the round trips instead).
      for (; in_flight > 0; --in_flight)
        self->receive([](int32_t) {});
      return std::chrono::duration<double>(clock_type::now() - t0).count();
    });
}

} // namespace

int main(int argc, char** argv) {
  size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 256;
  size_t total = mib << 20;
  if (argc > 2 && std::string{argv[2]} == "tcp") {
    auto seconds = tcp(total);
    fmt::print("{{\"figure\": \"w_tcp\", \"unit\": \"MiB/s\", \"mib\": {}, "
               "\"tcp\": {:.1f}}}\n",
               mib, seconds > 0 ? static_cast<double>(total) / seconds / (1 << 20)
                                : 0);
    return 0;
  }
  size_t batches = total / chunk;
  auto bytes_per_batch = weir::encode(make_batch(0)).size();
  auto rate = [&](double seconds, size_t bytes) {
    return seconds > 0 ? static_cast<double>(bytes) / seconds / (1 << 20) : 0;
  };
  double t = rate(tcp(total), total);
  double f = rate(framed(batches), batches * bytes_per_batch);
  double c = rate(caf_direct(batches), batches * bytes_per_batch);
  fmt::print("{{\"figure\": \"w_exchange_transport\", \"unit\": \"MiB/s\", "
             "\"mib\": {}, \"batch_bytes\": {}, \"tcp\": {:.1f}, "
             "\"framed\": {:.1f}, \"caf_direct\": {:.1f}, "
             "\"framed_ratio\": {:.3f}, \"caf_direct_ratio\": {:.3f}}}\n",
             mib, bytes_per_batch, t, f, c, t > 0 ? f / t : 0,
             t > 0 ? c / t : 0);
  return 0;
}
