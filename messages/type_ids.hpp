#pragma once

namespace caf {
class actor_system_config;
} // namespace caf

namespace weir {

/// Registers every weir message type (the `weir` type-id block) and the
/// "weir" error category with an actor system config. Call once per system.
void add_message_types(caf::actor_system_config& cfg);

} // namespace weir
