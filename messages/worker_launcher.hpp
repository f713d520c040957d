#pragma once

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/ids.hpp"
#include "messages/slots.hpp"

namespace weir {

/// An active ResourceManager's worker backend (local processes; a detached
/// actor, as starting and reaping processes are system calls). It reports
/// every worker process that ends to the ResourceManager (exited_atom) and
/// stops all of them when it ends itself.
using worker_launcher_actor = caf::typed_actor<
  /// ResourceManager: start worker `id` with `slots` slots of this profile.
  caf::reacts_to<start_atom, resource_id, int32_t, resource_profile>,
  /// ResourceManager: stop worker `id` (SIGTERM, then SIGKILL).
  caf::reacts_to<cancel_atom, resource_id>,
  /// ResourceManager (on its own tick): look for worker processes that
  /// ended. (The launcher schedules no timeouts itself: a detached actor
  /// with a pending timeout would keep the actor system from shutting
  /// down.)
  caf::reacts_to<tick_atom>>;

} // namespace weir
