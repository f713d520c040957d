#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>

#include <caf/io/network/rw_state.hpp>

#include "net/settings.hpp"

// OpenSSL's types, without its headers (they stay in net/*.cpp).
struct ssl_ctx_st;
struct ssl_st;

namespace weir::net {

/// One process's TLS setup: its certificate and key, the CAs it trusts,
/// peers verified both ways (a peer without a certificate from a trusted
/// CA fails the handshake), TLS 1.2 at least. Shared by all connections.
class tls_context {
public:
  /// Loads and checks the files; on failure `error` names the key, the
  /// file and what is wrong with it.
  static std::shared_ptr<tls_context> load(const tls_files& files,
                                           std::string& error);

  ~tls_context();
  tls_context(const tls_context&) = delete;
  tls_context& operator=(const tls_context&) = delete;

  ssl_ctx_st* native() const {
    return ctx_;
  }

  /// The OU of this process's own certificate ("weir-node", ...).
  std::string own_role() const;

  /// What a peer would refuse this process's own certificate for, checked
  /// here against the trusted CAs and the clock: "" when it is fine, else
  /// "expired ...", "not valid before ...", "not issued by ..." (for a
  /// client's one-line error before it connects).
  std::string own_certificate_problem(const tls_files& files) const;

private:
  explicit tls_context(ssl_ctx_st* ctx) : ctx_(ctx) {
  }

  ssl_ctx_st* ctx_;
};

/// TLS on one non-blocking socket, in the shape CAF's streams call
/// (read_some / write_some): the handshake runs inside the first reads and
/// writes; until it has verified the peer no byte reaches BASP. On failure
/// it keeps the reason in words ("certificate not trusted", ...).
class tls_session {
public:
  using rw_state = caf::io::network::rw_state;

  /// `peer_host`: the address a connecting side dialed (its certificate
  /// must name it); empty on an accepted connection.
  tls_session(std::shared_ptr<tls_context> ctx, int fd, bool accepting,
              const std::string& peer_host);
  ~tls_session();
  tls_session(const tls_session&) = delete;
  tls_session& operator=(const tls_session&) = delete;

  rw_state read_some(size_t& result, void* buf, size_t len);
  rw_state write_some(size_t& result, const void* buf, size_t len);
  bool must_read_more(size_t threshold);

  /// Whether the handshake verified the peer.
  bool established() const;

  /// Why the session failed; empty while it has not.
  const std::string& failure() const {
    return failure_;
  }

  /// The organizational unit of the peer's verified certificate
  /// ("weir-node", "weir-client"); empty before the handshake.
  std::string peer_role() const;

private:
  /// Drives the handshake; nothing once it is done, else the state to
  /// report for this read or write.
  std::optional<rw_state> advance_handshake(bool writing, size_t len);
  /// The state of an SSL_read or SSL_write that returned `ret`.
  rw_state transferred(int ret, size_t& result);
  rw_state fail(int ret);

  std::shared_ptr<tls_context> ctx_;
  ssl_st* ssl_;
  bool accepting_;
  bool established_ = false;
  /// Application data arrived: a later failure is not the handshake's.
  bool had_data_ = false;
  std::string failure_;
};

/// Blocks SIGPIPE in the calling thread: OpenSSL's writes to a socket the
/// peer closed then fail with EPIPE instead of ending the process.
void block_sigpipe_in_this_thread();

/// Why this thread's last TLS handshake failed, read from OpenSSL's error
/// queue (emptied): for clients whose TLS runs in a library (the REST
/// client's httplib). `keys` names the settings ("security.ssl.internal").
/// "" when the queue holds nothing.
std::string take_tls_error(const std::string& keys);

/// Whether something at host:port answers a TLS hello (a short blocking
/// probe, for the client's error message when it does not use TLS itself).
bool speaks_tls(const std::string& host, uint16_t port);

} // namespace weir::net
