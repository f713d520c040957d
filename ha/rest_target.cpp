#include "ha/rest_target.hpp"

#include <fmt/format.h>

#include "rest/security.hpp"
#include "config/keys.hpp"
#include "messages/errors.hpp"
#include "net/tls.hpp"

namespace weir {

namespace {

/// `text` with an http:// or https:// in front: the scheme, which wins
/// over the configuration's; the rest in `rest`.
std::optional<bool> scheme_of(const std::string& text, std::string& rest) {
  for (auto [scheme, https] : {std::pair{"http://", false},
                               std::pair{"https://", true}}) {
    std::string_view s{scheme};
    if (text.compare(0, s.size(), s) == 0) {
      rest = text.substr(s.size());
      if (!rest.empty() && rest.back() == '/')
        rest.pop_back();
      return https;
    }
  }
  rest = text;
  return std::nullopt;
}

/// The endpoints of "[scheme]HOST:PORT[,...]" with `settings`' TLS.
std::optional<std::vector<client::rest_endpoint>>
endpoints_of(const std::string& text, const client::rest_endpoint& settings) {
  std::string rest;
  auto scheme = scheme_of(text, rest);
  auto at = parse_endpoints(rest);
  if (!at || at->front().etcd)
    return std::nullopt;
  std::vector<client::rest_endpoint> out;
  for (auto& ep : *at) {
    auto x = settings;
    x.host = ep.host;
    x.port = ep.port;
    if (scheme)
      x.https = *scheme;
    out.push_back(std::move(x));
  }
  return out;
}

} // namespace

caf::expected<rest_target> resolve_rest_target(const std::string& address,
                                               const configuration& cfg) {
  rest_target t;
  auto sec = rest_security::of(cfg);
  t.settings.https = sec.https;
  t.settings.files = sec.files;
  if (sec.https && !t.settings.files.certificate.empty()) {
    // The files are checked here, for an error that names the key and the
    // file rather than a failed handshake.
    std::string problem;
    auto ctx = net::tls_context::load(t.settings.files, problem);
    if (!ctx)
      return make_error(errc::invalid_config, problem);
    // What the server would refuse it for, said here: the server's alert
    // may come after the connection broke off (TLS 1.3).
    if (auto why = t.settings.files.verify_peers
                     ? ctx->own_certificate_problem(t.settings.files)
                     : std::string{};
        !why.empty())
      return make_error(errc::invalid_config,
                        fmt::format("{}.certificate: {}: {}",
                                    t.settings.files.keys,
                                    t.settings.files.certificate, why));
  }
  auto at = parse_endpoints(address);
  if (at && at->front().etcd) {
    t.etcd = std::move(*at);
    t.cluster_id = cfg.get(keys::cluster_id);
    return t; // the leader is looked up when asked (ha/leader_jobs)
  }
  auto eps = endpoints_of(address, t.settings);
  if (!eps)
    return make_error(errc::invalid_config,
                      fmt::format("'{}' is not HOST:PORT, http(s)://HOST:PORT "
                                  "or etcd://HOST:PORT (the jobmanager's REST "
                                  "API)",
                                  address));
  t.candidates = std::move(*eps);
  return t;
}

caf::expected<client::rest_endpoint>
current_rest_leader(const rest_target& t, std::chrono::milliseconds timeout) {
  auto url = rest_leader_of(t.etcd, timeout, t.cluster_id);
  if (!url)
    return url.error();
  auto eps = endpoints_of(*url, t.settings);
  if (!eps || eps->size() != 1)
    return make_error(errc::timeout,
                      fmt::format("etcd names '{}' as the REST API of "
                                  "cluster {}'s leader, which is not a URL",
                                  *url, t.cluster_id));
  return eps->front();
}

caf::expected<std::unique_ptr<client::job_client>>
first_answering(const rest_target& t) {
  // One address: its first real request says whether it answers.
  if (t.candidates.size() == 1)
    return std::make_unique<client::job_client>(t.candidates.front());
  caf::error last;
  for (auto& at : t.candidates) {
    client::rest_connection probe{at};
    auto answer = probe.get("/config", std::chrono::seconds{10});
    if (answer && answer->ok())
      return std::make_unique<client::job_client>(at);
    last = answer ? make_error(errc::peer_lost,
                               fmt::format("{}: {}", at.url(),
                                           answer->error_text()))
                  : answer.error();
  }
  return last;
}

} // namespace weir
