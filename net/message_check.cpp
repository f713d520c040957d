#include "net/message_check.hpp"

#include <exception>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/message.hpp>
#include <caf/node_id.hpp>
#include <caf/proxy_registry.hpp>
#include <caf/scoped_execution_unit.hpp>

#include <fmt/format.h>

#include "messages/errors.hpp"

namespace weir::net {

namespace {

/// Makes no proxies (handles of other nodes deserialize as invalid ones)
/// and remembers the first node that is not `allowed`.
class recording_backend : public caf::proxy_registry::backend {
public:
  explicit recording_backend(const caf::node_id& allowed)
    : allowed_(allowed) {
  }

  caf::strong_actor_ptr make_proxy(caf::node_id node, caf::actor_id) override {
    if (node != allowed_ && !foreign_)
      foreign_ = std::move(node);
    return nullptr;
  }

  void set_last_hop(caf::node_id*) override {
    // nop
  }

  const caf::node_id& foreign() const {
    return foreign_;
  }

private:
  const caf::node_id& allowed_;
  caf::node_id foreign_;
};

} // namespace

caf::error message_check::check(const char* data, size_t size, bool routed,
                                const caf::node_id& peer) {
  auto refusal = [](std::string why) {
    return make_error(errc::protocol_violation, std::move(why));
  };
  recording_backend backend{peer};
  caf::proxy_registry registry{sys_, backend};
  caf::scoped_execution_unit unit{&sys_};
  unit.proxy_registry_ptr(&registry);
  caf::binary_deserializer source{&unit, data, size};
  try {
    caf::node_id from;
    caf::node_id to;
    if (routed && source(from, to))
      return refusal("a routed message without its nodes");
    std::vector<caf::strong_actor_ptr> stages;
    caf::message content;
    if (auto err = source(stages, content))
      return refusal(fmt::format("a message that does not deserialize ({})",
                                 sys_.render(err)));
  } catch (const std::exception& e) {
    return refusal(
      fmt::format("a message that does not deserialize ({})", e.what()));
  }
  if (backend.foreign())
    return refusal(fmt::format("a message naming an actor of node {}, which "
                               "is neither this node nor the peer",
                               to_string(backend.foreign())));
  return caf::none;
}

} // namespace weir::net
