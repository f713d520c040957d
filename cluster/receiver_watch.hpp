#pragma once

#include <caf/actor_cast.hpp>
#include <caf/actor_control_block.hpp>
#include <caf/message_id.hpp>

namespace weir {

/// While it lives, answers the pending request `response_id` of `requester`
/// with `errc::peer_lost` as soon as `receiver` goes down. CAF never answers
/// a request whose receiver died after it arrived, nor one sent to a node
/// whose connection dropped: without this a client waits for the whole
/// request timeout. A remote receiver goes down when its process dies (at
/// once) or stops answering CAF's connection heartbeats (after
/// heartbeat.timeout).
class receiver_watch {
public:
  receiver_watch(caf::strong_actor_ptr receiver, caf::strong_actor_ptr requester,
                 caf::message_id response_id);

  /// Detaches from the receiver: the request was answered.
  ~receiver_watch();

  receiver_watch(const receiver_watch&) = delete;
  receiver_watch& operator=(const receiver_watch&) = delete;

private:
  caf::strong_actor_ptr receiver_;
  const void* watch_ = nullptr;
};

} // namespace weir
