#pragma once

#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <vector>

#include <caf/actor_addr.hpp>

namespace weir {

class configuration;

/// Flink's heartbeat.interval, heartbeat.timeout and
/// heartbeat.rpc-failure-threshold.
/// An interval of 0 (the default here; the configuration's default is
/// 500 ms) turns heartbeats off, as in the embedded cluster, whose actors
/// share one process and see each other end through monitoring.
struct heartbeat_options {
  std::chrono::milliseconds interval{0};
  std::chrono::milliseconds timeout{3000};
  int rpc_failure_threshold = 2;

  static heartbeat_options from(const configuration& cfg);
};

/// Who was heard from when (Flink's HeartbeatManager, as a plain class). A
/// sender watches its targets and records every answer; a target watches
/// its sender and records every request. A watched peer that stays silent
/// for the timeout, or whose heartbeat requests fail `rpc_failure_threshold`
/// times in a row (it is known to be unreachable), is lost.
template <class Peer>
class basic_heartbeat_monitor {
public:
  using clock = std::chrono::steady_clock;

  explicit basic_heartbeat_monitor(heartbeat_options opts = {}) : opts_(opts) {
  }

  /// Starts watching `peer` (as if just heard from); again: resets it.
  void watch(const Peer& peer, clock::time_point now) {
    peers_[peer] = peer_state{now, 0, clock::duration{-1}};
  }

  void unwatch(const Peer& peer) { peers_.erase(peer); }

  bool watching(const Peer& peer) const { return peers_.count(peer) > 0; }

  /// An answer or a request arrived from `peer`.
  void heard_from(const Peer& peer, clock::time_point now) {
    auto i = peers_.find(peer);
    if (i == peers_.end())
      return;
    i->second.last_heard = std::max(i->second.last_heard, now);
    i->second.failures_in_a_row = 0;
  }

  /// A sender's heartbeat request to `peer`, sent at `sent`, was answered
  /// at `now`: heard from, and its round trip noted.
  void answered(const Peer& peer, clock::time_point sent,
                clock::time_point now) {
    heard_from(peer, now);
    if (auto i = peers_.find(peer); i != peers_.end())
      i->second.round_trip = now - sent;
  }

  /// When `peer` was last heard from (its watch began, else nothing).
  std::optional<clock::time_point> last_heard(const Peer& peer) const {
    auto i = peers_.find(peer);
    if (i == peers_.end())
      return std::nullopt;
    return i->second.last_heard;
  }

  /// The round trip of the last answered request to `peer` (nothing
  /// before one).
  std::optional<clock::duration> round_trip(const Peer& peer) const {
    auto i = peers_.find(peer);
    if (i == peers_.end() || i->second.round_trip.count() < 0)
      return std::nullopt;
    return i->second.round_trip;
  }

  /// A heartbeat request to `peer` failed (refused or unreachable, not
  /// timed out). True when that makes `peer` lost; it is no longer watched
  /// then.
  bool request_failed(const Peer& peer) {
    auto i = peers_.find(peer);
    if (i == peers_.end())
      return false;
    if (++i->second.failures_in_a_row < opts_.rpc_failure_threshold)
      return false;
    peers_.erase(i);
    return true;
  }

  /// The peers silent for longer than the timeout at `now`; they are no
  /// longer watched. Called once a round: a round that comes more than
  /// interval + timeout after the last one means this process itself was
  /// paused (SIGSTOP, a stall), so its peers' silence is its own. Then every
  /// peer counts as heard from now and none is lost: a master resumed after
  /// its lease ran out must not fail a job before it sees that it lost its
  /// leadership.
  std::vector<Peer> expired(clock::time_point now) {
    auto paused = last_round_ && now - *last_round_ > opts_.interval + opts_.timeout;
    last_round_ = now;
    if (paused) {
      for (auto& entry : peers_)
        entry.second.last_heard = now;
      return {};
    }
    std::vector<Peer> result;
    for (auto i = peers_.begin(); i != peers_.end();) {
      if (now - i->second.last_heard > opts_.timeout) {
        result.push_back(i->first);
        i = peers_.erase(i);
      } else {
        ++i;
      }
    }
    return result;
  }

  /// Every watched peer.
  std::vector<Peer> peers() const {
    std::vector<Peer> result;
    result.reserve(peers_.size());
    for (auto& entry : peers_)
      result.push_back(entry.first);
    return result;
  }

  const heartbeat_options& options() const { return opts_; }

private:
  struct peer_state {
    clock::time_point last_heard;
    int failures_in_a_row = 0;
    clock::duration round_trip{-1}; ///< negative: none answered yet
  };

  heartbeat_options opts_;
  std::map<Peer, peer_state> peers_;
  std::optional<clock::time_point> last_round_;
};

/// Actors watch actors.
using heartbeat_monitor = basic_heartbeat_monitor<caf::actor_addr>;

} // namespace weir
