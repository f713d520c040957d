#pragma once

#include <memory>

#include "messages/job_store.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace weir {

namespace storage {
class kv_store;
} // namespace storage

/// Spawns the detached actor that owns `kv` and performs the Dispatcher's
/// (blocking, synced) job-graph and job-result writes, and the JobMasters'
/// checkpoint writes, on its own thread. Checkpoint data goes to files
/// under `checkpoint_dir`; with "" checkpoints are not stored. Without
/// `own_thread` it runs on the scheduler like any actor: the simulation's
/// deterministic scheduler runs no threads.
job_store_actor spawn_job_store(caf::actor_system& sys,
                                std::shared_ptr<storage::kv_store> kv,
                                std::string checkpoint_dir = {},
                                bool own_thread = true);

} // namespace weir
