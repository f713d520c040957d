#pragma once

#include <string>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/dispatcher.hpp"
#include "messages/resource_manager.hpp"

namespace weir {

/// The jobmanager's supervisor (docs/architecture.md § Supervision): it starts the ResourceManager
/// and the Dispatcher, restarts whichever crashes (one-for-one, within its
/// restart intensity), re-announces the new handle, and gives up (ends with
/// supervision_gave_up) when they crash too often.
using supervisor_actor = caf::typed_actor<
  /// Gateway, client or test: the current Dispatcher and ResourceManager.
  caf::replies_to<lookup_atom>::with<dispatcher_actor, resource_manager_actor>,
  /// The jobmanager, once it listens: its HOST:PORT, for an active
  /// ResourceManager's workers; passed on now and to every restarted one.
  caf::reacts_to<start_atom, std::string>>;

} // namespace weir
