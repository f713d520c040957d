#include "cluster/receiver_watch.hpp"

#include <caf/abstract_actor.hpp>
#include <caf/attachable.hpp>
#include <caf/make_message.hpp>

#include <fmt/format.h>

#include "messages/errors.hpp"

namespace weir {

namespace {

class fail_request final : public caf::attachable {
public:
  /// Distinguishes these from CAF's own attachables when detaching.
  static constexpr size_t token_type = 0x77656972; // "weir"

  fail_request(caf::weak_actor_ptr requester, caf::message_id response_id)
    : requester_(std::move(requester)), response_id_(response_id) {
    // nop
  }

  void actor_exited(const caf::error& reason,
                    caf::execution_unit* host) override {
    auto requester = requester_.lock();
    if (!requester)
      return;
    auto err = make_error(errc::peer_lost,
                          fmt::format("connection to the master lost ({})",
                                      describe(reason)));
    requester->enqueue(nullptr, response_id_, caf::make_message(std::move(err)),
                       host);
  }

  bool matches(const token& what) override {
    return what.subtype == token_type && what.ptr == this;
  }

private:
  caf::weak_actor_ptr requester_;
  caf::message_id response_id_;
};

} // namespace

receiver_watch::receiver_watch(caf::strong_actor_ptr receiver,
                               caf::strong_actor_ptr requester,
                               caf::message_id response_id)
  : receiver_(std::move(receiver)) {
  if (!receiver_)
    return;
  auto* watch = new fail_request(
    caf::actor_cast<caf::weak_actor_ptr>(requester), response_id);
  watch_ = watch;
  // An actor that is already down calls the watch at once.
  receiver_->get()->attach(caf::attachable_ptr{watch});
}

receiver_watch::~receiver_watch() {
  if (receiver_ && watch_)
    receiver_->get()->detach(
      caf::attachable::token{fail_request::token_type, watch_});
}

} // namespace weir
