#pragma once

#include <chrono>
#include <cstddef>

struct ssl_st;
struct ssl_ctx_st;

namespace weir::net {

/// Waits until `sock` is ready for `events` (POLLIN, POLLOUT), closed or
/// failed, but not past `deadline`; false when the deadline passed.
bool poll_until(int sock, short events,
                std::chrono::steady_clock::time_point deadline);

/// The server side of TLS on one blocking socket, for weir's HTTP servers
/// (net/http_guard): the handshake within a deadline, then reads and
/// writes that the caller has polled for. OpenSSL stays in net/.
class server_tls {
public:
  server_tls(ssl_ctx_st* ctx, int sock);
  ~server_tls();
  server_tls(const server_tls&) = delete;
  server_tls& operator=(const server_tls&) = delete;

  /// Completes the handshake by `deadline` (client certificates checked as
  /// `ctx` says); false on failure or past it.
  bool accept(std::chrono::steady_clock::time_point deadline);

  /// Decrypted bytes wait to be read.
  bool pending() const;

  /// Bytes read (> 0), 0 when the peer closed, -1 on an error.
  long read(char* buf, size_t size);

  /// Bytes written, or -1.
  long write(const char* buf, size_t size);

  ssl_st* native() const {
    return ssl_;
  }

private:
  ssl_st* ssl_;
  int sock_;
  bool established_ = false;
};

} // namespace weir::net
