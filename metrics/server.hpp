#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <caf/expected.hpp>

#include "metrics/prometheus.hpp"

namespace weir {

class task_metrics;

/// Ports a taskmanager's metrics endpoint may take (Flink's
/// metrics.reporter.prom.port): one port, a range, or 0 (any free port).
struct port_range {
  uint16_t first = 0;
  uint16_t last = 0;
};

/// "9250", "9250-9260" (first <= last) or "0"; nothing when `text` is none.
std::optional<port_range> parse_port_range(const std::string& text);

/// A taskmanager's Prometheus endpoint (docs/operations.md § Metrics):
/// GET /metrics renders its task_metrics and its process's usage, served by
/// cpp-httplib on a thread of its own.
class metrics_server {
public:
  /// Listens on `address` at the first free port of `ports` and starts
  /// serving; an error (`errc::invalid_config`, one line naming the keys)
  /// when no port of it can be used.
  [[nodiscard]] static caf::expected<std::unique_ptr<metrics_server>>
  start(std::shared_ptr<task_metrics> metrics, std::string tm_id,
        const std::string& address, port_range ports, metric_naming naming);

  /// Stops serving and joins its thread.
  ~metrics_server();

  /// "http://ADDRESS:PORT/metrics" (an IPv6 address in brackets).
  std::string url() const;

  struct impl;

private:
  explicit metrics_server(std::unique_ptr<impl> x);
  std::unique_ptr<impl> impl_;
};

} // namespace weir
