#include "cluster/rest_server.hpp"

#include <chrono>

#include <fmt/format.h>

#include "cluster/http_serving.hpp"
#include "cluster/rest_context.hpp"
#include "cluster/rest_json.hpp"
#include "messages/errors.hpp"

namespace weir {

namespace rest {

reply error_reply(int status, const std::string& message) {
  return reply{status, errors(message)};
}

reply refused(const caf::error& err) {
  bool unknown = err.category() == errc_category()
                 && err.code() == static_cast<uint8_t>(errc::unknown_job);
  return error_reply(unknown ? 404 : 500, describe(err));
}

void send(httplib::Response& res, const reply& r) {
  res.status = r.status;
  res.set_content(r.body.dump(), "application/json");
}

std::optional<job_id> parse_job_id(const std::string& text, reply& refusal) {
  auto id = job_id::parse(text);
  if (!id)
    refusal = error_reply(400, fmt::format("malformed job id '{}': expected "
                                           "32 hexadecimal characters",
                                           text));
  return id;
}

} // namespace rest

namespace {

/// httplib's own refusals (no body yet) in Flink's error form: a path
/// without a route is 404 "Not found: PATH".
httplib::Server::HandlerResponse error_body(const httplib::Request& req,
                                            httplib::Response& res) {
  if (!res.body.empty())
    return httplib::Server::HandlerResponse::Unhandled;
  auto message = res.status == 404
                   ? fmt::format("Not found: {}", req.path)
                   : fmt::format("HTTP {}: {} {}", res.status, req.method,
                                 req.path);
  res.set_content(rest::errors(message).dump(), "application/json");
  return httplib::Server::HandlerResponse::Handled;
}

} // namespace

struct rest_server::impl {
  rest::context ctx;
  std::string address;
  int port = 0;
  httplib::Server http;
  std::thread serving;

  impl(caf::actor_system& sys, supervisor_actor sup, configuration cfg,
       std::string addr)
    : ctx{sys, std::move(sup), std::move(cfg)}, address(std::move(addr)) {
  }

  void routes() {
    rest::add_cluster_routes(http, ctx);
    rest::add_job_routes(http, ctx);
    rest::add_metrics_routes(http, ctx);
    http.set_error_handler(httplib::Server::HandlerWithResponse{error_body});
  }
};

caf::expected<std::unique_ptr<rest_server>>
rest_server::start(caf::actor_system& sys, supervisor_actor supervisor,
                   const configuration& config, const std::string& address,
                   uint16_t port) {
  auto x = std::make_unique<impl>(sys, std::move(supervisor), config, address);
  x->routes();
  refuse_shared_ports(x->http);
  bool bound = false;
  if (port == 0) {
    x->port = x->http.bind_to_any_port(address);
    bound = x->port > 0;
  } else {
    x->port = port;
    bound = x->http.bind_to_port(address, port);
  }
  if (!bound)
    return make_error(errc::invalid_config,
                      fmt::format("cannot listen on {}:{} for the REST API "
                                  "(rest.bind-address, rest.port)",
                                  address, port));
  x->serving = serve(x->http);
  return std::unique_ptr<rest_server>{new rest_server(std::move(x))};
}

rest_server::rest_server(std::unique_ptr<impl> x) : impl_(std::move(x)) {
}

rest_server::~rest_server() {
  impl_->http.stop();
  if (impl_->serving.joinable())
    impl_->serving.join();
}

uint16_t rest_server::port() const {
  return static_cast<uint16_t>(impl_->port);
}

std::string rest_server::url() const {
  return http_url(impl_->address, impl_->port);
}

} // namespace weir
