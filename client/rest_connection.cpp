#include "client/rest_connection.hpp"

#include <httplib.h>

#include <fmt/format.h>

#include "messages/errors.hpp"
#include "net/tls.hpp"

namespace weir::client {

namespace {

/// What went wrong, for a user: httplib names only the step.
std::string describe_failure(httplib::Error e, const rest_endpoint& at,
                             std::chrono::milliseconds waited,
                             std::chrono::milliseconds timeout) {
  if (e == httplib::Error::Read && waited >= timeout)
    return fmt::format("no answer within {} ms (is the jobmanager stopped "
                       "or overloaded?)",
                       timeout.count());
  switch (e) {
    case httplib::Error::Connection:
    case httplib::Error::ConnectionTimeout:
      return "cannot connect (no jobmanager's REST API listens there: "
             "check rest.port and -m)";
    case httplib::Error::Read:
      // With TLS 1.3 a refused client certificate shows on the first read.
      if (at.https)
        if (auto why = net::take_tls_error(at.files.keys); !why.empty())
          return "TLS handshake failed: " + why;
      if (!at.https && net::speaks_tls(at.host, at.port))
        return "the REST API there is HTTPS: set "
               "security.ssl.internal.enabled: true (or "
               "security.ssl.rest.enabled) with a certificate from its CA "
               "(docs/security.md § Clients), or give -m https://HOST:PORT";
      return "the connection broke off before the answer came (did the "
             "jobmanager stop, or is it not an HTTP server?)";
    case httplib::Error::Write:
      return "the connection broke off while sending the request";
    case httplib::Error::SSLConnection:
    case httplib::Error::SSLServerVerification: {
      auto why = net::take_tls_error(at.files.keys);
      if (why.empty() && e == httplib::Error::SSLServerVerification)
        why = fmt::format("the server's certificate does not chain to {} "
                          "or is not for {}",
                          at.files.trust, at.host);
      if (why.empty() && !net::speaks_tls(at.host, at.port))
        why = "the server does not use TLS (give -m http://HOST:PORT, or "
              "turn TLS off on this side)";
      return "TLS handshake failed: "
             + (why.empty() ? std::string{"unknown TLS error"} : why);
    }
    case httplib::Error::SSLLoadingCerts:
      return fmt::format("cannot load the certificate, key or trust store "
                         "of {}.*",
                         at.files.keys);
    default:
      return httplib::to_string(e);
  }
}

} // namespace

std::string rest_endpoint::url() const {
  auto shown = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return fmt::format("{}://{}:{}", https ? "https" : "http", shown, port);
}

std::string rest_answer::error_text() const {
  if (body.is_object()) {
    auto errors = body.find("errors");
    if (errors != body.end() && errors->is_array() && !errors->empty()
        && errors->front().is_string())
      return errors->front().get<std::string>();
  }
  return fmt::format("HTTP status {}", status);
}

struct rest_connection::impl {
  std::unique_ptr<httplib::ClientImpl> http;

  explicit impl(const rest_endpoint& at) {
    if (at.https) {
      auto tls = std::make_unique<httplib::SSLClient>(
        at.host, at.port, at.files.certificate, at.files.key);
      if (!at.files.trust.empty())
        tls->set_ca_cert_path(at.files.trust);
      tls->enable_server_certificate_verification(true);
      http = std::move(tls);
    } else {
      http = std::make_unique<httplib::ClientImpl>(at.host, at.port);
    }
    http->set_keep_alive(true);
    http->set_tcp_nodelay(true);
  }
};

rest_connection::rest_connection(rest_endpoint at)
  : at_(std::move(at)), impl_(std::make_unique<impl>(at_)) {
}

rest_connection::~rest_connection() = default;
rest_connection::rest_connection(rest_connection&&) noexcept = default;
rest_connection&
rest_connection::operator=(rest_connection&&) noexcept = default;

namespace {

/// What a request got, timed.
struct sent {
  explicit sent(std::chrono::milliseconds t) : timeout(t) {
  }

  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  std::chrono::milliseconds timeout;

  std::chrono::milliseconds waited() const {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
  }
};

caf::expected<rest_answer> answer_of(httplib::Result res,
                                     const rest_endpoint& at,
                                     const std::string& path,
                                     const sent& request) {
  if (!res)
    return make_error(errc::peer_lost,
                      fmt::format("cannot reach the jobmanager's REST API at "
                                  "{}: {}",
                                  at.url(),
                                  describe_failure(res.error(), at,
                                                   request.waited(),
                                                   request.timeout)));
  rest_answer out;
  out.status = res->status;
  if (!res->body.empty()) {
    out.body = nlohmann::json::parse(res->body, nullptr, false);
    if (out.body.is_discarded())
      return make_error(errc::peer_lost,
                        fmt::format("{}{} answered HTTP {} with a body that "
                                    "is not JSON: is it weir's REST API?",
                                    at.url(), path, res->status));
  }
  return out;
}

void set_timeouts(httplib::ClientImpl& http,
                  std::chrono::milliseconds timeout) {
  // OpenSSL writes to a socket the server closed (a refused certificate)
  // fail with EPIPE rather than end the client.
  net::block_sigpipe_in_this_thread();
  http.set_connection_timeout(
    std::min<std::chrono::milliseconds>(timeout, std::chrono::seconds{10}));
  http.set_read_timeout(timeout);
  http.set_write_timeout(timeout);
}

} // namespace

caf::expected<rest_answer>
rest_connection::get(const std::string& path,
                     std::chrono::milliseconds timeout) {
  set_timeouts(*impl_->http, timeout);
  sent request{timeout};
  return answer_of(impl_->http->Get(path.c_str()), at_, path, request);
}

caf::expected<rest_answer>
rest_connection::post(const std::string& path, const nlohmann::json& body,
                      std::chrono::milliseconds timeout) {
  std::string text;
  try {
    text = body.dump();
  } catch (const nlohmann::json::exception&) {
    return make_error(errc::invalid_job,
                      fmt::format("the request to {}{} holds text that is "
                                  "not UTF-8 (JSON carries only UTF-8)",
                                  at_.url(), path));
  }
  set_timeouts(*impl_->http, timeout);
  sent request{timeout};
  return answer_of(impl_->http->Post(path.c_str(), text, "application/json"),
                   at_, path, request);
}

caf::expected<rest_answer>
rest_connection::put(const std::string& path, std::string bytes,
                     std::chrono::milliseconds timeout) {
  set_timeouts(*impl_->http, timeout);
  sent request{timeout};
  return answer_of(impl_->http->Put(path.c_str(), bytes,
                                    "application/octet-stream"),
                   at_, path, request);
}

} // namespace weir::client
