#pragma once

// A peer that speaks bytes, not weir: plain TCP or TLS (with a certificate
// of the test's CA) to a node's port, for the attacks of the security
// tests. Also the process checks those tests make (alive, resident memory).

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <openssl/err.h>
#include <openssl/ssl.h>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "messages/errors.hpp"
#include "net/certificates.hpp"
#include "process.hpp"

namespace weir::test {

/// A cluster CA with a node certificate, a client certificate, an expired
/// one, one not valid yet, and a client certificate of another CA.
struct certificates {
  temp_dir dir;
  std::string ca, other;

  /// Every certificate must be made: a test without one proves nothing.
  static void made(const caf::expected<weir::net::cert_files>& files) {
    if (!files)
      FAIL(weir::describe(files.error()));
  }

  certificates() {
    ca = dir.file("ca");
    other = dir.file("other");
    made(weir::net::make_ca(ca, "test-ca", weir::net::validity::days(30)));
    made(weir::net::make_ca(other, "other-ca", weir::net::validity::days(30)));
    made(weir::net::issue(ca, weir::net::cert_kind::node, "node", {},
                     weir::net::validity::days(30)));
    made(weir::net::issue(ca, weir::net::cert_kind::client, "client", {},
                     weir::net::validity::days(30)));
    made(weir::net::issue(ca, weir::net::cert_kind::client, "expired", {},
                     weir::net::validity{-2 * 86400, -86400}));
    made(weir::net::issue(ca, weir::net::cert_kind::client, "future", {},
                     weir::net::validity{86400, 2 * 86400}));
    made(weir::net::issue(other, weir::net::cert_kind::client, "client", {},
                     weir::net::validity::days(30)));
  }

  /// The -D flags of TLS with certificate NAME of the CA in `dir`.
  std::vector<std::string> flags(const std::string& dir,
                                 const std::string& name) const {
    return {"-Dsecurity.ssl.internal.enabled=true",
            "-Dsecurity.ssl.internal.certificate=" + dir + "/" + name + ".pem",
            "-Dsecurity.ssl.internal.key=" + dir + "/" + name + "-key.pem",
            "-Dsecurity.ssl.internal.trust-certificates=" + ca + "/ca.pem"};
  }
};

/// Resident memory of a process, in KiB (0 when it is gone).
inline long rss_kib(int pid) {
  return status_kib(pid, "VmRSS:");
}

inline bool alive(int pid) {
  auto status = read_file(fmt::format("/proc/{}/stat", pid));
  // Field 3 is the state; Z is a zombie (it has died).
  auto close = status.rfind(')');
  return close != std::string::npos && close + 2 < status.size()
         && status[close + 2] != 'Z';
}

inline int connect_to(const std::string& address) {
  auto colon = address.rfind(':');
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(
    static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  inet_pton(AF_INET, address.substr(0, colon).c_str(), &sa.sin_addr);
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) == 0);
  return fd;
}

/// Whether the peer closes `fd` within `deadline` (reading and dropping
/// whatever it sends first).
inline bool closed_by_peer(int fd, std::chrono::seconds deadline) {
  timeval limit{static_cast<time_t>(deadline.count()), 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  char buf[4096];
  auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    auto n = recv(fd, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET))
      return true;
    if (n < 0 && errno != EINTR)
      return false; // the receive timeout passed
  }
  return false;
}

/// A connection to a node's port that sends whatever it is told: over
/// plain TCP, or over TLS with the certificate `name` of `certs`' CA.
class raw_peer {
public:
  explicit raw_peer(const std::string& address) : fd_(connect_to(address)) {
  }

  raw_peer(const std::string& address, const certificates& certs,
           const std::string& name)
    : raw_peer(address) {
    ctx_.reset(SSL_CTX_new(TLS_client_method()));
    REQUIRE(ctx_);
    auto pem = certs.ca + "/" + name + ".pem";
    auto key = certs.ca + "/" + name + "-key.pem";
    REQUIRE(SSL_CTX_use_certificate_chain_file(ctx_.get(), pem.c_str()) == 1);
    REQUIRE(SSL_CTX_use_PrivateKey_file(ctx_.get(), key.c_str(),
                                        SSL_FILETYPE_PEM)
            == 1);
    ssl_.reset(SSL_new(ctx_.get()));
    SSL_set_fd(ssl_.get(), fd_);
    REQUIRE(SSL_connect(ssl_.get()) == 1);
  }

  ~raw_peer() {
    ssl_.reset();
    ::close(fd_);
  }

  raw_peer(const raw_peer&) = delete;
  raw_peer& operator=(const raw_peer&) = delete;

  /// Sends all of `bytes`; false once the peer closed.
  bool send(const std::string& bytes) {
    size_t done = 0;
    while (done < bytes.size()) {
      auto left = bytes.size() - done;
      long n = ssl_ ? SSL_write(ssl_.get(), bytes.data() + done,
                                static_cast<int>(std::min<size_t>(left,
                                                                  1 << 20)))
                    : ::send(fd_, bytes.data() + done, left, MSG_NOSIGNAL);
      if (n <= 0)
        return false;
      done += static_cast<size_t>(n);
    }
    return true;
  }

  /// Reads exactly `n` bytes (within 10 s); fewer if the peer closed.
  std::string read(size_t n) {
    timeval limit{10, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    std::string out(n, '\0');
    size_t done = 0;
    while (done < n) {
      long got = ssl_ ? SSL_read(ssl_.get(), out.data() + done,
                                 static_cast<int>(n - done))
                      : ::recv(fd_, out.data() + done, n - done, 0);
      if (got <= 0)
        break;
      done += static_cast<size_t>(got);
    }
    out.resize(done);
    return out;
  }

  /// Whether the node closes the connection within `deadline`.
  bool closed_within(std::chrono::seconds deadline) {
    if (!ssl_)
      return closed_by_peer(fd_, deadline);
    timeval limit{static_cast<time_t>(deadline.count()), 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    char buf[4096];
    auto until = std::chrono::steady_clock::now() + deadline;
    while (std::chrono::steady_clock::now() < until) {
      auto n = SSL_read(ssl_.get(), buf, sizeof buf);
      if (n > 0)
        continue;
      auto e = SSL_get_error(ssl_.get(), n);
      if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
        return false; // the receive timeout passed
      return true;    // closed, reset, or a TLS alert
    }
    return false;
  }

private:
  struct ctx_free {
    void operator()(SSL_CTX* x) const {
      SSL_CTX_free(x);
    }
  };
  struct ssl_free {
    void operator()(SSL* x) const {
      SSL_free(x);
    }
  };

  int fd_;
  std::unique_ptr<SSL_CTX, ctx_free> ctx_;
  std::unique_ptr<SSL, ssl_free> ssl_;
};

} // namespace weir::test
