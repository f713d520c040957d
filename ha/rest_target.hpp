#pragma once

// What a client's address names (the CLI's -m, remote_access::connect):
// a jobmanager's REST API, its standbys', or the REST API of the leader
// that etcd names. Clients speak only the REST API (docs/security.md §
// Clients).

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "client/job_client.hpp"
#include "ha/gateway.hpp"
#include "config/config.hpp"

namespace weir {

struct rest_target {
  /// The REST APIs to try in turn: one, or a leader and its standbys.
  std::vector<client::rest_endpoint> candidates;
  /// For "etcd://...": its members (the leader is the one they name), and
  /// the cluster whose leader to ask for. Empty otherwise.
  std::vector<endpoint> etcd;
  std::string cluster_id;
  /// How to reach a REST API found through etcd (TLS as configured).
  client::rest_endpoint settings;
};

/// Parses `address`: "HOST:PORT[,HOST:PORT...]" (HTTPS exactly when the
/// configuration secures the REST API), with "http://" or "https://" in
/// front to choose, or "etcd://HOST:PORT[,...]" (no candidates: the
/// leader is looked up when asked). A malformed address is
/// `errc::invalid_config` naming it; unusable TLS files
/// `errc::invalid_config` naming the key and file.
[[nodiscard]] caf::expected<rest_target> resolve_rest_target(const std::string& address,
                                               const configuration& cfg);

/// The REST API that etcd names as `t`'s leader's now: unreachable etcd is
/// `errc::storage_failure`, no leader `errc::timeout`.
[[nodiscard]] caf::expected<client::rest_endpoint>
current_rest_leader(const rest_target& t, std::chrono::milliseconds timeout);

/// A client of the first of `t.candidates` that answers (only a leader
/// serves a REST API); the error of the last one when none does.
[[nodiscard]] caf::expected<std::unique_ptr<client::job_client>>
first_answering(const rest_target& t);

} // namespace weir
