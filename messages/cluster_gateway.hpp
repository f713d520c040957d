#pragma once

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/dispatcher.hpp"
#include "messages/resource_manager.hpp"

namespace weir {

/// What a jobmanager publishes on its port (jobmanager.rpc.port): clients
/// and TaskExecutors look up the current Dispatcher and ResourceManager here
/// (Flink's leader retrieval, for a single master).
using cluster_gateway_actor = caf::typed_actor<
  /// Client or TaskExecutor process: the Dispatcher and ResourceManager.
  caf::replies_to<lookup_atom>::with<dispatcher_actor, resource_manager_actor>>;

} // namespace weir
