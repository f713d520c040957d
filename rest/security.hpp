#pragma once

#include <string>

#include <caf/expected.hpp>

#include "config/config.hpp"
#include "net/settings.hpp"

namespace weir {

/// How the jobmanager's REST API is secured (docs/security.md § The REST
/// API): as security.ssl.rest.* say when security.ssl.rest.enabled is set;
/// otherwise, on a cluster with internal TLS, with the internal
/// certificate, key and CA and client authentication, so that a cluster
/// with TLS has no unauthenticated door; otherwise plain HTTP.
struct rest_security {
  /// HTTPS with `files`.
  bool https = false;
  /// Clients must show a certificate that chains to files.trust.
  bool authenticate = false;
  net::tls_files files;
  /// Internal TLS is on but REST does not authenticate its clients (set
  /// so explicitly): it answers reads only, never a change.
  bool read_only = false;

  static rest_security of(const configuration& cfg);

  /// On a non-loopback `address` without client authentication: an error
  /// (`errc::invalid_config`, one line) unless that was decided explicitly
  /// (security.ssl.rest.authentication-enabled: false), then a warning;
  /// "" otherwise.
  [[nodiscard]] caf::expected<std::string> listen_warning(const configuration& cfg,
                                            const std::string& address) const;
};

} // namespace weir
