#pragma once

#include <string>

#include "messages/code_resolver.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace weir {

/// Spawns the code resolver of a TaskExecutor (detached). Fetched blobs go
/// to `cache_dir/<hash>/<name>`; code with a name that is not a file name
/// or a hash that is not a content hash (check_user_code) is refused
/// (`errc::invalid_job`) before anything is read or written. `node` names
/// this TaskExecutor in errors. It reads and writes files, so it runs on
/// a thread of its own unless `own_thread` is false (tests on CAF's
/// deterministic scheduler, task_executor_options::helper_threads).
code_resolver_actor spawn_code_resolver(caf::actor_system& sys,
                                        std::string cache_dir,
                                        std::string node,
                                        bool own_thread = true);

} // namespace weir
