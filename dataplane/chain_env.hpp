#pragma once

#include <functional>
#include <memory>
#include <string>

#include "dataplane/exchange_options.hpp"
#include "messages/deployment.hpp"
#include "operators/driver_services.hpp"

namespace weir {

/// What an operator chain needs from its node besides its deployment. Plain
/// data: the actor that runs the chain fills it in (docs/architecture.md).
struct chain_env {
  exchange_options exchange;
  /// Where RocksDB state goes (taskmanager.state.local.root-dirs).
  std::string local_state_dir;
  /// The job's libraries and files on this node.
  local_code code;
  /// Makes a driver's link to its cluster (driver jobs only; unset: a
  /// driver vertex gets none).
  std::function<std::unique_ptr<ops::driver_services>()> make_driver;
};

} // namespace weir
