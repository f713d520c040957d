#include "metrics/server.hpp"

#include <charconv>

#include <fmt/format.h>

#include "actors/common/process_stats.hpp"
#include "actors/task_executor/task_metrics.hpp"
#include "net/http_guard.hpp"
#include "net/http_serving.hpp"
#include "metrics/prometheus.hpp"
#include "messages/errors.hpp"

namespace weir {

namespace {

std::optional<uint16_t> parse_port(std::string_view text) {
  unsigned value = 0;
  auto end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc{} || ptr != end || value > 65535)
    return std::nullopt;
  return static_cast<uint16_t>(value);
}

} // namespace

std::optional<port_range> parse_port_range(const std::string& text) {
  auto dash = text.find('-');
  if (dash == std::string::npos) {
    auto p = parse_port(text);
    if (!p)
      return std::nullopt;
    return port_range{*p, *p};
  }
  auto first = parse_port(std::string_view{text}.substr(0, dash));
  auto last = parse_port(std::string_view{text}.substr(dash + 1));
  if (!first || !last || *first == 0 || *first > *last)
    return std::nullopt;
  return port_range{*first, *last};
}

struct metrics_server::impl {
  std::shared_ptr<task_metrics> metrics;
  std::string tm_id;
  metric_naming naming;
  std::string address;
  int port = 0;
  /// Prometheus scrapes one connection at a time: a few threads do.
  guarded_http_server http{http_limits{std::chrono::seconds{10},
                                       std::chrono::seconds{30},
                                       std::chrono::seconds{5}, 4}};
  std::thread serving;
};

caf::expected<std::unique_ptr<metrics_server>>
metrics_server::start(std::shared_ptr<task_metrics> metrics, std::string tm_id,
                      const std::string& address, port_range ports,
                      metric_naming naming) {
  auto x = std::make_unique<impl>();
  x->metrics = std::move(metrics);
  x->tm_id = std::move(tm_id);
  x->naming = std::move(naming);
  x->address = address;
  auto* state = x.get();
  x->http.Get("/metrics", [state](const httplib::Request&,
                                  httplib::Response& res) {
    auto snap = state->metrics->read(task_metrics::clock::now());
    res.set_content(taskmanager_metrics_text(snap, state->tm_id,
                                             read_process_usage(),
                                             state->naming),
                    "text/plain; version=0.0.4; charset=utf-8");
  });
  // A port in use is refused; a range moves on to its next port.
  // Only GET /metrics: no request body is ever read.
  x->http.set_payload_max_length(4096);
  x->http.set_pre_routing_handler(
    [](const httplib::Request& req, httplib::Response& res) {
      auto [status, why] = body_refusal(req, false);
      if (status == 0 && req.method != "GET" && req.method != "HEAD") {
        status = 405;
        why = "only GET";
      }
      if (status == 0)
        return httplib::Server::HandlerResponse::Unhandled;
      res.status = status;
      res.set_content(why + "\n", "text/plain");
      return httplib::Server::HandlerResponse::Handled;
    });
  refuse_shared_ports(x->http);
  if (ports.first == 0) {
    x->port = x->http.bind_to_any_port(address);
  } else {
    for (int p = ports.first; p <= ports.last && x->port <= 0; ++p)
      if (x->http.bind_to_port(address, p))
        x->port = p;
  }
  if (x->port <= 0) {
    auto range = ports.first == ports.last
                   ? std::to_string(ports.first)
                   : fmt::format("{}-{}", ports.first, ports.last);
    return make_error(errc::invalid_config,
                      fmt::format("cannot listen on {}:{} for the metrics "
                                  "(metrics.reporter.prom.host, "
                                  "metrics.reporter.prom.port)",
                                  address, range));
  }
  x->serving = serve(x->http);
  return std::unique_ptr<metrics_server>{new metrics_server(std::move(x))};
}

metrics_server::metrics_server(std::unique_ptr<impl> x) : impl_(std::move(x)) {
}

metrics_server::~metrics_server() {
  impl_->http.stop();
  if (impl_->serving.joinable())
    impl_->serving.join();
}

std::string metrics_server::url() const {
  return http_url(impl_->address, impl_->port) + "/metrics";
}

} // namespace weir
