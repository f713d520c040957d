#include "rest/server.hpp"

#include <stdlib.h>
#include <sys/socket.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include <fmt/format.h>

#include "net/http_guard.hpp"
#include "net/http_serving.hpp"
#include "rest/body.hpp"
#include "rest/context.hpp"
#include "rest/json.hpp"
#include "rest/security.hpp"
#include "config/keys.hpp"
#include "messages/errors.hpp"
#include "net/tls.hpp"

namespace weir {

namespace rest {

reply error_reply(int status, const std::string& message) {
  return reply{status, errors(message)};
}

reply refused(const caf::error& err) {
  auto is = [&](errc code) {
    return err.category() == errc_category()
           && err.code() == static_cast<uint8_t>(code);
  };
  auto text = describe(err);
  if (is(errc::invalid_request))
    return error_reply(text.rfind(body_too_large, 0) == 0 ? 413 : 400, text);
  return error_reply(is(errc::unknown_job) ? 404 : 500, text);
}

std::string json_text(const nlohmann::json& body) {
  // Bytes from a request (a path, a field) need not be UTF-8: replaced,
  // never thrown (a throw here would end the jobmanager).
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void send(httplib::Response& res, const reply& r) {
  res.status = r.status;
  res.set_content(json_text(r.body), "application/json");
}

void live_statuses(caf::scoped_actor& self, dispatcher_actor& d,
                   std::vector<job_status>& jobs) {
  for (auto& j : jobs) {
    if (is_globally_terminal(j.state))
      continue;
    self->request(d, answer_deadline, status_atom_v, j.id, true)
      .receive([&](job_status& s) { j = std::move(s); }, [](caf::error&) {});
  }
}

reply unknown_vertex(const job_status& s, const std::string& vertex) {
  return error_reply(404, fmt::format("job {} has no vertex '{}'",
                                      s.id.to_string(), vertex));
}

caf::expected<job_id> parse_job_id(const std::string& text) {
  if (auto id = job_id::parse(text))
    return *id;
  return make_error(errc::invalid_request,
                    fmt::format("malformed job id '{}': expected 32 "
                                "hexadecimal characters",
                                text));
}

} // namespace rest

namespace {

/// httplib's own refusals (no body yet) in Flink's error form: a path
/// without a route (for the method) is 404 "Not found: PATH", as Flink's
/// router answers; a body over `max_body` bytes 413.
httplib::Server::HandlerResponse error_body(const httplib::Request& req,
                                            httplib::Response& res,
                                            int64_t max_body) {
  if (!res.body.empty())
    return httplib::Server::HandlerResponse::Unhandled;
  std::string message;
  if (res.status == 404)
    message = fmt::format("Not found: {}", req.path);
  else if (res.status == 413)
    message = fmt::format("the request body is larger than {} bytes ({})",
                          max_body, keys::rest_max_content_length.name);
  else
    message = fmt::format("HTTP {}: {} {}", res.status, req.method, req.path);
  res.set_content(rest::json_text(rest::errors(message)), "application/json");
  return httplib::Server::HandlerResponse::Handled;
}

/// A route that threw: 500 with what it threw, in Flink's error form.
void exception_body(const httplib::Request&, httplib::Response& res,
                    std::exception_ptr thrown) {
  std::string what = "unknown exception";
  try {
    std::rethrow_exception(thrown);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
  }
  rest::send(res, rest::error_reply(500, "internal error: " + what));
}

/// The server: HTTPS as rest_security says, its files checked first (one
/// line naming the key and the file when one is unusable).
caf::expected<std::unique_ptr<httplib::Server>>
make_server(const rest_security& security) {
  if (!security.https)
    return std::make_unique<guarded_http_server>();
  auto& files = security.files;
  std::string problem;
  if (!net::tls_context::load(files, problem))
    return make_error(errc::invalid_config, problem);
  // Debian's cpp-httplib is built with OpenSSL: it loads the same files.
  auto trust = security.authenticate ? files.trust.c_str() : nullptr;
  auto server = std::make_unique<guarded_https_server>(
    files.certificate.c_str(), files.key.c_str(), trust);
  if (!server->is_valid())
    return make_error(errc::invalid_config,
                      fmt::format("{}.*: cpp-httplib cannot use {} and {}",
                                  files.keys, files.certificate, files.key));
  return std::unique_ptr<httplib::Server>{std::move(server)};
}

/// A fresh private directory for uploaded libraries; "" if none can be made.
std::string make_upload_dir() {
  std::error_code ec;
  auto base = std::filesystem::temp_directory_path(ec);
  if (ec)
    return {};
  auto pattern = (base / "weir-rest-XXXXXX").string();
  return ::mkdtemp(pattern.data()) == nullptr ? std::string{} : pattern;
}

} // namespace

struct rest_server::impl {
  rest::context ctx;
  std::string address;
  int port = 0;
  bool https = false;
  rest_security security;
  std::unique_ptr<httplib::Server> http;
  std::thread serving;

  impl(caf::actor_system& sys, supervisor_actor sup, configuration cfg,
       std::string addr)
    : ctx{sys, std::move(sup), std::move(cfg)}, address(std::move(addr)) {
  }

  ~impl() {
    if (!ctx.upload_dir.empty()) {
      std::error_code ec;
      std::filesystem::remove_all(ctx.upload_dir, ec);
    }
  }

  void routes() {
    // First: /jobs/metrics is no job id, /taskmanagers/metrics no
    // TaskExecutor.
    rest::add_metric_view_routes(*http, ctx);
    rest::add_cluster_routes(*http, ctx);
    rest::add_job_routes(*http, ctx);
    rest::add_action_routes(*http, ctx);
    rest::add_client_routes(*http, ctx);
    rest::add_jar_list_routes(*http, ctx);
    rest::add_web_routes(*http);
    rest::add_metrics_routes(*http, ctx);
    rest::add_subtask_routes(*http, ctx);
    if (ctx.config.get(keys::web_submit_enable))
      rest::add_submit_routes(*http, ctx);
    auto max_body = ctx.config.get(keys::rest_max_content_length).mb << 20;
    http->set_payload_max_length(static_cast<size_t>(max_body));
    http->set_error_handler(httplib::Server::HandlerWithResponse{
      [max_body](const httplib::Request& req, httplib::Response& res) {
        return error_body(req, res, max_body);
      }});
    http->set_exception_handler(exception_body);
    http->set_pre_routing_handler(
      [read_only = security.read_only, max_body](const httplib::Request& req,
                                                 httplib::Response& res) {
        auto [status, why] = body_refusal(req, true);
        if (status == 0 && read_only && req.method != "GET"
            && req.method != "HEAD") {
          status = 403;
          why = "this cluster uses TLS: a change over REST needs HTTPS with "
                "a client certificate from its CA "
                "(security.ssl.rest.authentication-enabled; see "
                "docs/security.md)";
        }
        if (status == 0) {
          reserve_body(req, static_cast<size_t>(max_body));
          return httplib::Server::HandlerResponse::Unhandled;
        }
        rest::send(res, rest::error_reply(status, why));
        return httplib::Server::HandlerResponse::Handled;
      });
  }
};

caf::expected<std::unique_ptr<rest_server>>
rest_server::start(caf::actor_system& sys, supervisor_actor supervisor,
                   const configuration& config, const std::string& address,
                   uint16_t port, std::function<void()> shut_down) {
  auto x = std::make_unique<impl>(sys, std::move(supervisor), config, address);
  x->ctx.shut_down = std::move(shut_down);
  x->security = rest_security::of(config);
  auto server = make_server(x->security);
  if (!server)
    return server.error();
  x->http = std::move(*server);
  x->https = x->security.https;
  x->ctx.upload_dir = make_upload_dir();
  if (x->ctx.upload_dir.empty())
    return make_error(errc::invalid_config,
                      "cannot make a directory for the REST API's uploads "
                      "under the temporary directory (TMPDIR)");
  x->routes();
  refuse_shared_ports(*x->http);
  bool bound = false;
  if (port == 0) {
    x->port = x->http->bind_to_any_port(address);
    bound = x->port > 0;
  } else {
    x->port = port;
    bound = x->http->bind_to_port(address, port);
  }
  if (!bound)
    return make_error(errc::invalid_config,
                      fmt::format("cannot listen on {}:{} for the REST API "
                                  "(rest.bind-address, rest.port)",
                                  address, port));
  // An IPv6 address in brackets.
  auto host = address.find(':') != std::string::npos ? "[" + address + "]"
                                                      : address;
  x->ctx.address = fmt::format("{}://{}:{}", x->https ? "https" : "http",
                               host, x->port);
  x->serving = serve(*x->http);
  return std::unique_ptr<rest_server>{new rest_server(std::move(x))};
}

caf::error rest_server::check_config(const configuration& config) {
  auto server = make_server(rest_security::of(config));
  return server ? caf::error{} : std::move(server.error());
}

rest_server::rest_server(std::unique_ptr<impl> x) : impl_(std::move(x)) {
}

rest_server::~rest_server() {
  impl_->http->stop();
  if (impl_->serving.joinable())
    impl_->serving.join();
}

uint16_t rest_server::port() const {
  return static_cast<uint16_t>(impl_->port);
}

std::string rest_server::url() const {
  return impl_->ctx.address;
}

} // namespace weir
