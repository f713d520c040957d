#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include <caf/expected.hpp>

#include "config/config.hpp"
#include "messages/supervisor.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace weir {

/// The jobmanager's REST API (docs/operations.md § REST API): Flink's v1
/// paths and field names, served by cpp-httplib on its own threads. Each
/// request asks the supervisor for the current Dispatcher and
/// ResourceManager, then asks them through their typed interfaces (blocking
/// that thread, with a deadline). Routes live in rest_routes_*.cpp.
class rest_server {
public:
  /// Listens on address:port (0: any free port) and starts serving (HTTPS
  /// with security.ssl.rest.enabled); an error (`errc::invalid_config`, one
  /// line) when it cannot bind or use its TLS files.
  /// `shut_down`, when given, ends the process the way SIGTERM does:
  /// DELETE /cluster calls it once its answer is sent (none: 404).
  [[nodiscard]] static caf::expected<std::unique_ptr<rest_server>>
  start(caf::actor_system& sys, supervisor_actor supervisor,
        const configuration& config, const std::string& address,
        uint16_t port, std::function<void()> shut_down = {});

  /// Checks the REST API's TLS settings (security.ssl.rest.*) the way
  /// start() uses them: `errc::invalid_config` naming the key and the file.
  [[nodiscard]] static caf::error check_config(const configuration& config);

  /// Stops serving and joins its threads.
  ~rest_server();

  /// The port it listens on.
  uint16_t port() const;

  /// "http://ADDRESS:PORT", "https://..." with security.ssl.rest.enabled
  /// (an IPv6 address in brackets).
  std::string url() const;

  struct impl;

private:
  explicit rest_server(std::unique_ptr<impl> x);
  std::unique_ptr<impl> impl_;
};

} // namespace weir
