#include "net/server_tls.hpp"

#include <algorithm>
#include <cerrno>

#include <fcntl.h>
#include <poll.h>

#include <openssl/ssl.h>

namespace weir::net {

namespace {

using clock_type = std::chrono::steady_clock;

void set_blocking(int sock, bool blocking) {
  auto flags = ::fcntl(sock, F_GETFL);
  ::fcntl(sock, F_SETFL, blocking ? flags & ~O_NONBLOCK : flags | O_NONBLOCK);
}

} // namespace

bool poll_until(int sock, short events, clock_type::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - clock_type::now());
    pollfd p{sock, events, 0};
    auto n = ::poll(&p, 1, static_cast<int>(std::max<int64_t>(0, left.count())));
    if (n > 0)
      return true;
    if (n == 0 || errno != EINTR)
      return false;
  }
}

server_tls::server_tls(ssl_ctx_st* ctx, int sock)
  : ssl_(SSL_new(ctx)), sock_(sock) {
  if (ssl_ != nullptr)
    SSL_set_fd(ssl_, sock);
}

server_tls::~server_tls() {
  if (ssl_ == nullptr)
    return;
  if (established_)
    SSL_shutdown(ssl_);
  SSL_free(ssl_);
}

bool server_tls::accept(clock_type::time_point deadline) {
  if (ssl_ == nullptr)
    return false;
  // Non-blocking, so that a slow handshake cannot outlast the deadline.
  set_blocking(sock_, false);
  for (;;) {
    auto rc = SSL_accept(ssl_);
    if (rc == 1) {
      established_ = true;
      break;
    }
    auto err = SSL_get_error(ssl_, rc);
    short events = err == SSL_ERROR_WANT_READ    ? POLLIN
                   : err == SSL_ERROR_WANT_WRITE ? POLLOUT
                                                 : 0;
    if (events == 0 || !poll_until(sock_, events, deadline))
      break;
  }
  set_blocking(sock_, true);
  return established_;
}

bool server_tls::pending() const {
  return SSL_pending(ssl_) > 0;
}

long server_tls::read(char* buf, size_t size) {
  auto n = SSL_read(ssl_, buf, static_cast<int>(std::min<size_t>(size, 1 << 30)));
  if (n > 0)
    return n;
  return SSL_get_error(ssl_, n) == SSL_ERROR_ZERO_RETURN ? 0 : -1;
}

long server_tls::write(const char* buf, size_t size) {
  auto n = SSL_write(ssl_, buf, static_cast<int>(std::min<size_t>(size, 1 << 30)));
  return n > 0 ? n : -1;
}

} // namespace weir::net
