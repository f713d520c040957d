#pragma once

#include <memory>

#include "messages/deployment.hpp"
#include "messages/dispatcher.hpp"
#include "messages/job_master.hpp"
#include "operators/driver_services.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace weir {

/// A driver's client of its cluster: jobs it submits are parsed and checked
/// here (with the application's libraries), carry the application's user
/// code and defaults (the driver vertex's `parallelism`, `savepoint`,
/// `allow-non-restored` parameters) and belong to the driver job's
/// application. Calls block; drivers run on threads of their own.
/// What the driver prints goes to `jm` as collected records of the driver's
/// attempt.
std::unique_ptr<ops::driver_services>
make_driver_client(caf::actor_system& sys, dispatcher_actor dispatcher,
                   job_master_actor jm, const task_deployment& driver,
                   const local_code& code);

} // namespace weir
