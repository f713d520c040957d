#pragma once

#include "actors/resource_manager/slurm_batch.hpp"
#include "actors/resource_manager/worker_launcher.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace weir {

/// Spawns the Slurm worker backend of `rm` (resourcemanager.backend:
/// slurm): each worker is one Slurm batch job (sbatch) that execs `cmd`'s
/// program with its arguments; squeue tells which jobs ended (reported as
/// exited_atom), scancel stops them, all of them when the launcher ends.
/// Detached: sbatch, squeue and scancel are blocking process calls. The
/// interface is the local backend's (messages/worker_launcher.hpp).
worker_launcher_actor spawn_slurm_launcher(caf::actor_system& sys,
                                           resource_manager_actor rm,
                                           worker_command cmd,
                                           slurm_options opts);

} // namespace weir
