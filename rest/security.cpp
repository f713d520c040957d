#include "rest/security.hpp"

#include <fmt/format.h>

#include "net/address.hpp"
#include "config/keys.hpp"
#include "messages/errors.hpp"

namespace weir {

rest_security rest_security::of(const configuration& cfg) {
  rest_security out;
  bool internal = cfg.get(keys::ssl_internal_enabled);
  if (cfg.is_set(keys::ssl_rest_enabled) || !internal) {
    out.https = cfg.get(keys::ssl_rest_enabled);
    out.authenticate = out.https && cfg.get(keys::ssl_rest_authentication);
    out.files = net::tls_files{cfg.get(keys::ssl_rest_certificate),
                               cfg.get(keys::ssl_rest_key),
                               cfg.get(keys::ssl_rest_trust),
                               "security.ssl.rest", out.authenticate};
  } else {
    out.https = true;
    out.authenticate = true;
    out.files = net::tls_files{cfg.get(keys::ssl_internal_certificate),
                               cfg.get(keys::ssl_internal_key),
                               cfg.get(keys::ssl_internal_trust),
                               "security.ssl.internal", true};
  }
  out.read_only = internal && !out.authenticate;
  return out;
}

caf::expected<std::string>
rest_security::listen_warning(const configuration& cfg,
                              const std::string& address) const {
  if (authenticate || net::is_loopback_address(address))
    return std::string{};
  auto shown = address.empty() ? std::string{"'' (every address)"} : address;
  if (!cfg.is_set(keys::ssl_rest_authentication))
    return make_error(
      errc::invalid_config,
      fmt::format("refusing to serve the REST API on {} without client "
                  "authentication: set {}: true (with security.ssl.rest.*; "
                  "see docs/security.md), or false to answer anyone who can "
                  "reach it",
                  shown, keys::ssl_rest_authentication.name));
  if (read_only)
    return fmt::format("WARNING: the REST API on {} has no client "
                       "authentication ({}): anyone who can reach it can see "
                       "the cluster's jobs; changes are refused",
                       shown, keys::ssl_rest_authentication.name);
  return fmt::format("WARNING: the REST API on {} has no client "
                     "authentication ({}): anyone who can reach it can see, "
                     "cancel and submit jobs",
                     shown, keys::ssl_rest_authentication.name);
}

} // namespace weir
