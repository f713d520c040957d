#pragma once

// One HTTP(S) connection to a jobmanager's REST API: what weir's clients
// (the CLI, the C++ API) speak instead of the cluster's internal protocol,
// as Flink's RestClusterClient does (docs/security.md § Clients).
// httplib stays in the .cpp.

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <caf/expected.hpp>
#include <nlohmann/json.hpp>

#include "net/settings.hpp"

namespace weir::client {

/// Where the REST API is and how to reach it.
struct rest_endpoint {
  std::string host;
  uint16_t port = 0;
  /// HTTPS, checking the server's certificate against files.trust and
  /// showing files.certificate and files.key when they are set.
  bool https = false;
  net::tls_files files;

  /// "http://HOST:PORT" or "https://HOST:PORT".
  std::string url() const;
};

/// An answer: the HTTP status and the JSON body (null when there is none).
struct rest_answer {
  int status = 0;
  nlohmann::json body;

  bool ok() const {
    return status >= 200 && status < 300;
  }

  /// The first of Flink's {"errors": [...]}, or the status line.
  std::string error_text() const;
};

class rest_connection {
public:
  explicit rest_connection(rest_endpoint at);
  ~rest_connection();
  rest_connection(rest_connection&&) noexcept;
  rest_connection& operator=(rest_connection&&) noexcept;

  /// Sends a request and reads the answer within `timeout`. A jobmanager
  /// that cannot be reached, or that breaks off, is `errc::peer_lost` with
  /// one line naming the URL and what failed.
  [[nodiscard]] caf::expected<rest_answer> get(const std::string& path,
                                 std::chrono::milliseconds timeout);
  [[nodiscard]] caf::expected<rest_answer> post(const std::string& path,
                                  const nlohmann::json& body,
                                  std::chrono::milliseconds timeout);
  [[nodiscard]] caf::expected<rest_answer> put(const std::string& path, std::string bytes,
                                 std::chrono::milliseconds timeout);

  const rest_endpoint& endpoint() const {
    return at_;
  }

private:
  struct impl;
  rest_endpoint at_;
  std::unique_ptr<impl> impl_;
};

} // namespace weir::client
