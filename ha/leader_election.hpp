#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <caf/expected.hpp>

#include "ha/etcd_store.hpp"

namespace weir {

class configuration;

/// high-availability.type: etcd (docs/deployment.md § etcd).
struct etcd_ha_options {
  /// high-availability.etcd.endpoints: HOST:PORT each.
  std::vector<std::string> endpoints;
  /// high-availability.cluster-id: names the cluster's keys in etcd.
  std::string cluster_id = "default";
  /// high-availability.etcd.lease-ttl.
  std::chrono::milliseconds lease_ttl{10000};
  /// high-availability.etcd.retry-period.
  std::chrono::milliseconds retry{500};

  /// The options when high-availability.type is etcd, nothing when it is
  /// not; an error (`errc::invalid_config`, naming the key) when the
  /// endpoints are missing or malformed.
  [[nodiscard]] static caf::expected<std::optional<etcd_ha_options>>
  from(const configuration& cfg);
};

/// The etcd key naming cluster `cluster_id`'s leader; its value is the
/// leader's HOST:PORT ("" until it listens).
std::string leader_key(const std::string& cluster_id);

/// The etcd key naming the URL of cluster `cluster_id`'s leader's REST API
/// (what clients talk to); absent while it has none.
std::string rest_leader_key(const std::string& cluster_id);

/// The prefix of cluster `cluster_id`'s store pointers in etcd.
std::string store_prefix(const std::string& cluster_id);

/// The address of cluster `cluster_id`'s leader as etcd names it; "" while
/// no jobmanager leads (or the leader does not listen yet).
[[nodiscard]] caf::expected<std::string> find_leader(ha::etcd_client& etcd,
                                       const std::string& cluster_id);

/// The URL of cluster `cluster_id`'s leader's REST API as etcd names it;
/// "" when there is none (no leader, or one without a REST API: ask
/// find_leader which).
[[nodiscard]] caf::expected<std::string> find_rest_leader(ha::etcd_client& etcd,
                                            const std::string& cluster_id);

/// This jobmanager's leadership of a cluster, won in etcd: the leader key,
/// created with a lease that a thread of its own keeps alive. When the lease
/// cannot be renewed before it could end (etcd unreachable, the process
/// stopped past it), `lost` runs on that thread, before etcd could grant the
/// key to another; every store write is fenced by the key anyway
/// (ha/etcd_store.hpp). Ending the leadership revokes the lease, so
/// a standby takes over at once.
class leadership {
public:
  /// Campaigns until this process leads, retrying every retry period while
  /// another leads (`standby(address)` is called when the leader changes) or
  /// etcd cannot be reached (`standby` gets the error line). Returns nullptr
  /// when `stop()` says to give up.
  static std::unique_ptr<leadership>
  campaign(const etcd_ha_options& opts, const std::function<bool()>& stop,
           const std::function<void(const std::string&)>& standby);

  ~leadership();

  leadership(const leadership&) = delete;
  leadership& operator=(const leadership&) = delete;

  /// The fence of this leadership: the leader key and its create revision.
  const ha::etcd_fence& fence() const { return fence_; }

  /// The client of this leadership's etcd, for the store.
  std::shared_ptr<ha::etcd_client> etcd() const { return etcd_; }

  /// Publishes this leader's HOST:PORT under the leader key, and its REST
  /// API's URL (unless "") under rest_leader_key; fails when the leadership
  /// was lost meanwhile.
  [[nodiscard]] caf::error publish(const std::string& address, const std::string& rest_url);

  /// Starts keeping the lease alive (call it at once after the campaign:
  /// the first renewal is immediate); `lost(why)` runs once, on a thread of
  /// the leadership, when the lease may end or the leader key was lost.
  void keep(std::function<void(const std::string&)> lost);

  /// Ends the leadership from outside (a write found the fence gone).
  void lose(const std::string& why) { end(why); }

  /// Whether the lease may have ended (the renewal deadline passed).
  /// Async-signal-safe: a handler of SIGCONT asks it the moment a stopped
  /// process runs again, before its other threads could act for long.
  bool expired() const noexcept;

private:
  leadership(const etcd_ha_options& opts,
             std::shared_ptr<ha::etcd_client> etcd, int64_t lease,
             int64_t ttl_seconds, int64_t sent, ha::etcd_fence fence);

  void renew_lease();
  void watch_deadline();

  /// Ends the leadership once: `lost_` runs with `why`.
  void end(const std::string& why);

  etcd_ha_options opts_;
  std::shared_ptr<ha::etcd_client> etcd_;
  int64_t lease_;
  std::chrono::seconds ttl_;
  ha::etcd_fence fence_;
  /// When the lease could end at the earliest, less a margin (CLOCK_BOOTTIME
  /// nanoseconds: it counts a suspended machine's time too); renewals move
  /// it.
  std::atomic<int64_t> deadline_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> ended_{false};
  std::function<void(const std::string&)> lost_;
  std::thread keeper_;
  std::thread watchdog_;
};

} // namespace weir
