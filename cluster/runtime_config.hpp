#pragma once

#include <string>

namespace caf {
class actor_system_config;
} // namespace caf

namespace weir {

/// Registers weir's message types and sets weir's scheduler defaults:
/// `scheduler.policy = sharing` and one worker thread per core. CAF's
/// work-stealing workers poll while idle and took CPU away from the
/// detached file-reading subtasks (word count: 95 MB/s with stealing,
/// 138 MB/s with sharing on 2 cores; see docs/configuration.md).
/// With `remote`, also loads CAF's middleman (BASP over TCP) for processes
/// of a session cluster and remote clients, and sets the BASP application
/// identifier to "weir-<version>/<cluster_id>": peers of another weir
/// version or another cluster are refused during the handshake.
void configure_actor_system(caf::actor_system_config& cfg, bool remote = false,
                            const std::string& cluster_id = "default");

} // namespace weir
