#pragma once

#include <string>

#include <caf/actor_addr.hpp>
#include <caf/error.hpp>
#include <caf/message_priority.hpp>
#include <caf/response_type.hpp>
#include <caf/sec.hpp>

#include <fmt/format.h>

#include "actors/common/heartbeat_monitor.hpp"
#include "messages/atoms.hpp"
#include "messages/errors.hpp"

namespace weir {

/// What a peer of type `Handle` answers a heartbeat request with (its id).
template <class Handle>
using heartbeat_reply_t = caf::detail::tl_head_t<
  caf::response_type_t<typename Handle::signatures, heartbeat_atom>>;

/// One heartbeat request of a heartbeat sender (Flink's
/// HeartbeatManagerSenderImpl): `self`, which keeps `hb`, asks `target` for
/// a heartbeat ahead of its other messages (high priority), waiting
/// heartbeat.timeout. An answer marks `target` heard and notes the round
/// trip. A request that fails otherwise than by timing out counts towards
/// heartbeat.rpc-failure-threshold; reaching it calls
/// `lost(peer, "heartbeat requests failed: ...")` (`hb` watches it no
/// longer). `hb` must live as long as `self` (a member of its state).
template <class Self, class Handle, class Lost>
void request_heartbeat(Self* self, heartbeat_monitor& hb, const Handle& target,
                       Lost lost) {
  auto peer = target.address();
  auto* monitor = &hb;
  auto sent = self->clock().now();
  self
    ->template request<caf::message_priority::high>(target,
                                                     hb.options().timeout,
                                                     heartbeat_atom_v)
    .then(
      [=](const heartbeat_reply_t<Handle>&) {
        monitor->answered(peer, sent, self->clock().now());
      },
      [=](caf::error& err) {
        if (err != caf::sec::request_timeout && monitor->request_failed(peer))
          lost(peer, "heartbeat requests failed: " + describe(err));
      });
}

/// Ends a heartbeat round of `self`, which keeps `hb` (sender and target
/// alike): every watched peer silent for longer than heartbeat.timeout is
/// lost (`lost(peer, "no heartbeat for <timeout> ms")`, no longer watched),
/// and the next round comes after heartbeat.interval (a `beat_atom` to
/// `self`, which the actor's private interface handles).
template <class Self, class Lost>
void end_heartbeat_round(Self* self, heartbeat_monitor& hb, Lost lost) {
  auto& opts = hb.options();
  for (auto& peer : hb.expired(self->clock().now()))
    lost(peer, fmt::format("no heartbeat for {} ms", opts.timeout.count()));
  self->delayed_send(self, opts.interval, beat_atom_v);
}

} // namespace weir
