#include "net/tls.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>

#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <fmt/format.h>

namespace weir::net {

namespace {

/// Whether `path` holds a PEM private key without a passphrase.
bool readable_private_key(const std::string& path) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio{BIO_new_file(path.c_str(), "r"),
                                               BIO_free};
  if (!bio)
    return false;
  auto no_passphrase = [](char*, int, int, void*) { return 0; };
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key{
    PEM_read_bio_PrivateKey(bio.get(), nullptr, no_passphrase, nullptr),
    EVP_PKEY_free};
  ERR_clear_error();
  return key != nullptr;
}

using rw_state = caf::io::network::rw_state;

/// Whether `path` can be opened for reading; the reason when not.
std::string unreadable(const std::string& path) {
  std::ifstream in{path};
  if (in)
    return {};
  return std::strerror(errno);
}

std::string file_error(const char* key, const std::string& path,
                       const std::string& what) {
  return fmt::format("{}: {}: {}", key, path, what);
}

std::string describe_verify_error(long code) {
  switch (code) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return "the peer's certificate expired";
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return "the peer's certificate is not valid yet";
    case X509_V_ERR_HOSTNAME_MISMATCH:
    case X509_V_ERR_IP_ADDRESS_MISMATCH:
      return "certificate not trusted: the peer's certificate is not for "
             "the address it was reached at";
    default:
      return fmt::format("certificate not trusted: the peer's certificate "
                         "does not chain to security.ssl.internal."
                         "trust-certificates ({})",
                         X509_verify_cert_error_string(code));
  }
}

/// The reason of a failed TLS call, in the words a user acts on.
std::string describe_failure(SSL* ssl, int ret, bool had_data) {
  auto kind = SSL_get_error(ssl, ret);
  auto err = ERR_peek_error();
  ERR_clear_error();
  auto verify = SSL_get_verify_result(ssl);
  std::string what;
  bool verify_failed = err != 0 && ERR_GET_LIB(err) == ERR_LIB_SSL
                       && ERR_GET_REASON(err) == SSL_R_CERTIFICATE_VERIFY_FAILED;
  if (verify != X509_V_OK
      && (verify_failed || SSL_get0_peer_certificate(ssl) != nullptr)) {
    what = describe_verify_error(verify);
  } else if (err != 0 && ERR_GET_LIB(err) == ERR_LIB_SSL) {
    switch (ERR_GET_REASON(err)) {
      case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
      case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
      case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
      case SSL_R_TLSV1_ALERT_DECRYPT_ERROR:
        // The peer's alert does not say why; a certificate that is not
        // valid yet is the one cause this side can see.
        if (auto* own = SSL_get_certificate(ssl);
            own != nullptr
            && X509_cmp_current_time(X509_get0_notBefore(own)) > 0)
          what = "certificate not valid yet: the peer refused this "
                 "process's certificate (is this host's clock behind?)";
        else
          what = "certificate not trusted by the peer (this process's "
                 "security.ssl.internal.certificate is not from its CA)";
        break;
      case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
        what = "certificate expired: the peer refused this process's "
               "certificate";
        break;
      case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
      case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
        what = "the peer requires a certificate";
        break;
      case SSL_R_WRONG_VERSION_NUMBER:
      case SSL_R_PACKET_LENGTH_TOO_LONG:
      case SSL_R_RECORD_LENGTH_MISMATCH:
      case SSL_R_UNEXPECTED_RECORD:
      case SSL_R_HTTP_REQUEST:
        what = "the peer does not use TLS (its security.ssl.internal."
               "enabled is false)";
        break;
      case SSL_R_UNEXPECTED_EOF_WHILE_READING:
        // A weir node without TLS closes a TLS hello, sometimes before its
        // own first bytes went out: then nothing tells the two cases apart.
        what = "the peer closed the connection during the handshake (does "
               "it use TLS? is its security.ssl.internal.enabled false?)";
        break;
      default:
        what = ERR_reason_error_string(err) ? ERR_reason_error_string(err)
                                            : "unknown TLS error";
    }
  } else if (kind == SSL_ERROR_ZERO_RETURN || kind == SSL_ERROR_SYSCALL) {
    what = "the peer closed the connection";
  } else {
    what = "unknown TLS error";
  }
  return had_data ? "TLS failed: " + what : "TLS handshake failed: " + what;
}

} // namespace

std::shared_ptr<tls_context> tls_context::load(const tls_files& files,
                                               std::string& error) {
  auto cert_name = files.keys + ".certificate";
  auto key_name = files.keys + ".key";
  auto trust_name = files.keys + ".trust-certificates";
  auto cert_key = cert_name.c_str();
  auto key_key = key_name.c_str();
  auto trust_key = trust_name.c_str();
  struct {
    const char* key;
    const std::string& path;
  } required[] = {{cert_key, files.certificate},
                  {key_key, files.key},
                  {trust_key, files.trust}};
  for (auto& [key, path] : required) {
    if (key == trust_key && !files.verify_peers)
      continue;
    if (path.empty()) {
      error = fmt::format("{} is not set ({}.enabled is true)", key,
                          files.keys);
      return nullptr;
    }
    if (auto why = unreadable(path); !why.empty()) {
      error = file_error(key, path, "cannot read: " + why);
      return nullptr;
    }
  }
  std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx{
    SSL_CTX_new(TLS_method()), SSL_CTX_free};
  if (!ctx) {
    error = "cannot create a TLS context";
    return nullptr;
  }
  ERR_clear_error();
  SSL_CTX_set_min_proto_version(ctx.get(), TLS1_2_VERSION);
  if (SSL_CTX_use_certificate_chain_file(ctx.get(), files.certificate.c_str())
      != 1) {
    ERR_clear_error();
    error = file_error(cert_key, files.certificate,
                       "not a PEM certificate chain");
    return nullptr;
  }
  if (SSL_CTX_use_PrivateKey_file(ctx.get(), files.key.c_str(),
                                  SSL_FILETYPE_PEM)
      != 1) {
    ERR_clear_error();
    // OpenSSL 3 checks the key against the certificate while loading it: a
    // readable key of another certificate fails here, not below.
    error = readable_private_key(files.key)
              ? file_error(key_key, files.key,
                           "does not match the certificate "
                             + files.certificate)
              : file_error(key_key, files.key, "not a PEM private key "
                                               "(or one with a passphrase)");
    return nullptr;
  }
  if (SSL_CTX_check_private_key(ctx.get()) != 1) {
    ERR_clear_error();
    error = file_error(key_key, files.key,
                       "does not match the certificate " + files.certificate);
    return nullptr;
  }
  if (files.verify_peers
      && SSL_CTX_load_verify_locations(ctx.get(), files.trust.c_str(), nullptr)
           != 1) {
    ERR_clear_error();
    error = file_error(trust_key, files.trust, "holds no PEM certificate");
    return nullptr;
  }
  if (files.verify_peers)
    SSL_CTX_set_verify(ctx.get(),
                       SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT,
                       nullptr);
  // CAF's stream may hand a retried write a moved or shorter buffer.
  SSL_CTX_set_mode(ctx.get(), SSL_MODE_ENABLE_PARTIAL_WRITE
                                | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  return std::shared_ptr<tls_context>{new tls_context(ctx.release())};
}

std::string tls_context::own_certificate_problem(const tls_files& files) const {
  auto* own = SSL_CTX_get0_certificate(ctx_);
  auto* store = SSL_CTX_get_cert_store(ctx_);
  if (own == nullptr || store == nullptr)
    return {};
  std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> check{
    X509_STORE_CTX_new(), X509_STORE_CTX_free};
  if (!check || X509_STORE_CTX_init(check.get(), store, own, nullptr) != 1)
    return {};
  auto ok = X509_verify_cert(check.get()) == 1;
  auto code = X509_STORE_CTX_get_error(check.get());
  ERR_clear_error();
  if (ok)
    return {};
  auto when = [](const ASN1_TIME* t) {
    std::unique_ptr<BIO, decltype(&BIO_free)> out{BIO_new(BIO_s_mem()),
                                                  BIO_free};
    ASN1_TIME_print(out.get(), t);
    char* data = nullptr;
    auto n = BIO_get_mem_data(out.get(), &data);
    return std::string(data, static_cast<size_t>(n));
  };
  switch (code) {
    case X509_V_ERR_CERT_HAS_EXPIRED:
      return "expired on " + when(X509_get0_notAfter(own));
    case X509_V_ERR_CERT_NOT_YET_VALID:
      return "not valid before " + when(X509_get0_notBefore(own))
             + " (is this host's clock behind?)";
    default:
      return fmt::format("not issued by a CA of {}.trust-certificates ({})",
                         files.keys, X509_verify_cert_error_string(code));
  }
}

tls_context::~tls_context() {
  SSL_CTX_free(ctx_);
}

tls_session::tls_session(std::shared_ptr<tls_context> ctx, int fd,
                         bool accepting, const std::string& peer_host)
  : ctx_(std::move(ctx)), ssl_(SSL_new(ctx_->native())),
    accepting_(accepting) {
  SSL_set_fd(ssl_, fd);
  if (accepting) {
    SSL_set_accept_state(ssl_);
  } else {
    SSL_set_connect_state(ssl_);
    // A client checks that the jobmanager's certificate names the address
    // it connects to (a DNS name or an IP address of its subjectAltName).
    auto* param = SSL_get0_param(ssl_);
    if (X509_VERIFY_PARAM_set1_ip_asc(param, peer_host.c_str()) != 1) {
      ERR_clear_error();
      SSL_set1_host(ssl_, peer_host.c_str());
    }
  }
}

tls_session::~tls_session() {
  SSL_free(ssl_);
}

bool tls_session::established() const {
  return established_;
}

rw_state tls_session::fail(int ret) {
  if (failure_.empty())
    failure_ = describe_failure(ssl_, ret, had_data_);
  return rw_state::failure;
}

std::optional<rw_state> tls_session::advance_handshake(bool writing,
                                                       size_t len) {
  if (established_)
    return std::nullopt;
  ERR_clear_error();
  auto ret = accepting_ ? SSL_accept(ssl_) : SSL_connect(ssl_);
  if (ret == 1) {
    established_ = true;
    return std::nullopt;
  }
  switch (SSL_get_error(ssl_, ret)) {
    case SSL_ERROR_WANT_READ:
      // An empty write (CAF's nudge to start the handshake) is done.
      return writing && len == 0 ? rw_state::indeterminate
                                 : rw_state::success;
    case SSL_ERROR_WANT_WRITE:
      return rw_state::success;
    default:
      return fail(ret);
  }
}

rw_state tls_session::transferred(int ret, size_t& result) {
  if (ret > 0) {
    result = static_cast<size_t>(ret);
    return rw_state::success;
  }
  switch (SSL_get_error(ssl_, ret)) {
    case SSL_ERROR_WANT_READ:
    case SSL_ERROR_WANT_WRITE:
      return rw_state::success; // nothing moved; poll again
    default:
      return fail(ret);
  }
}

rw_state tls_session::read_some(size_t& result, void* buf, size_t len) {
  result = 0;
  if (auto state = advance_handshake(false, len))
    return *state;
  if (len == 0)
    return rw_state::success;
  ERR_clear_error();
  auto state = transferred(SSL_read(ssl_, buf, static_cast<int>(len)), result);
  if (result > 0)
    had_data_ = true;
  return state;
}

rw_state tls_session::write_some(size_t& result, const void* buf,
                                  size_t len) {
  result = 0;
  if (auto state = advance_handshake(true, len))
    return *state;
  if (len == 0)
    return rw_state::indeterminate;
  ERR_clear_error();
  return transferred(SSL_write(ssl_, buf, static_cast<int>(len)), result);
}

bool tls_session::must_read_more(size_t threshold) {
  return static_cast<size_t>(SSL_pending(ssl_)) >= threshold;
}

namespace {

/// The OU of a certificate's subject: its role.
std::string role_of(const X509* cert) {
  if (cert == nullptr)
    return {};
  char unit[128] = {0};
  if (X509_NAME_get_text_by_NID(X509_get_subject_name(cert),
                                NID_organizationalUnitName, unit,
                                sizeof unit)
      < 0)
    return {};
  return unit;
}

} // namespace

std::string tls_session::peer_role() const {
  return role_of(SSL_get0_peer_certificate(ssl_));
}

std::string tls_context::own_role() const {
  return role_of(SSL_CTX_get0_certificate(ctx_));
}

void block_sigpipe_in_this_thread() {
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
}

std::string take_tls_error(const std::string& keys) {
  // The first of OpenSSL's errors is the cause; later ones follow from it
  // ("shutdown while in init").
  unsigned long err = 0;
  for (auto e = ERR_get_error(); e != 0; e = ERR_get_error())
    if (err == 0 && ERR_GET_LIB(e) == ERR_LIB_SSL)
      err = e;
  if (err == 0)
    return {};
  switch (ERR_GET_REASON(err)) {
    case SSL_R_CERTIFICATE_VERIFY_FAILED:
      return fmt::format("the server's certificate does not chain to {}."
                         "trust-certificates or is not for the address it "
                         "was reached at",
                         keys);
    case SSL_R_TLSV1_ALERT_UNKNOWN_CA:
    case SSL_R_SSLV3_ALERT_BAD_CERTIFICATE:
    case SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE:
    case SSL_R_TLSV1_ALERT_DECRYPT_ERROR:
      return fmt::format("certificate not trusted by the server (this "
                         "process's {}.certificate is not from its CA, or "
                         "not valid yet)",
                         keys);
    case SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED:
      return "certificate expired: the server refused this process's "
             "certificate";
    case SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED:
    case SSL_R_PEER_DID_NOT_RETURN_A_CERTIFICATE:
      return fmt::format("the server requires a client certificate (set "
                         "{}.certificate and .key)",
                         keys);
    case SSL_R_WRONG_VERSION_NUMBER:
    case SSL_R_PACKET_LENGTH_TOO_LONG:
    case SSL_R_RECORD_LENGTH_MISMATCH:
    case SSL_R_UNEXPECTED_RECORD:
      return "the server does not use TLS (give -m http://HOST:PORT, or "
             "turn TLS off on this side)";
    default: {
      auto* text = ERR_reason_error_string(err);
      return text != nullptr ? text : "unknown TLS error";
    }
  }
}

bool speaks_tls(const std::string& host, uint16_t port) {
  // The probe writes with OpenSSL too; the client's thread does not rely
  // on SIGPIPE.
  block_sigpipe_in_this_thread();
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found)
      != 0)
    return false;
  std::unique_ptr<addrinfo, decltype(&freeaddrinfo)> guard{found,
                                                           freeaddrinfo};
  int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    return false;
  timeval limit{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
  bool tls = false;
  if (::connect(fd, found->ai_addr, found->ai_addrlen) == 0) {
    std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx{
      SSL_CTX_new(TLS_method()), SSL_CTX_free};
    SSL_CTX_set_verify(ctx.get(), SSL_VERIFY_NONE, nullptr);
    std::unique_ptr<SSL, decltype(&SSL_free)> ssl{SSL_new(ctx.get()),
                                                  SSL_free};
    SSL_set_fd(ssl.get(), fd);
    auto ret = SSL_connect(ssl.get());
    // A TLS peer answered with its hello (and may have refused us after).
    tls = ret == 1 || SSL_get0_peer_certificate(ssl.get()) != nullptr;
    ERR_clear_error();
  }
  ::close(fd);
  return tls;
}

} // namespace weir::net
