#pragma once

#include <string>

#include "messages/code_resolver.hpp"

namespace caf {
class actor_system;
} // namespace caf

namespace weir {

/// Spawns the code resolver of a TaskExecutor (detached). Fetched blobs go
/// to `cache_dir/<hash>/<name>`; `node` names this TaskExecutor in errors.
code_resolver_actor spawn_code_resolver(caf::actor_system& sys,
                                        std::string cache_dir,
                                        std::string node);

} // namespace weir
