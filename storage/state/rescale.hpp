#pragma once

// Restoring a vertex at another parallelism (docs/state.md § Rescaling):
// each new subtask gets the old subtasks' snapshots and keeps the keyed
// state of its key groups; operator state goes to the operator whole.

#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <string>
#include <vector>

#include "messages/key_groups.hpp"
#include "storage/state/keyed_backend.hpp"

namespace weir::state {

/// What a subtask restores when its vertex's parallelism or key groups
/// changed: its key groups, and every old subtask's snapshot (vertex
/// snapshot bytes, or a state handle to them) in old subtask order, each
/// marked whether its keyed state can hold keys of `range` (only those are
/// read for keyed state; all of them for operator state).
struct rescaled_state {
  int32_t max_parallelism = 0;
  key_group_range range;
  struct old_subtask {
    std::string bytes;
    bool keyed = true;
  };
  std::vector<old_subtask> old_subtasks;
  /// The vertex runs at its old parallelism (its key groups changed: a
  /// snapshot from before key groups): each subtask keeps the operator
  /// state of the old subtask of its index, as without rescaling.
  bool same_parallelism = false;
};

std::string encode_rescaled(const rescaled_state& s);
bool is_rescaled(const std::string& bytes);
/// nullopt when `bytes` are not a rescaled state (truncated, or another
/// format).
std::optional<rescaled_state> decode_rescaled(const std::string& bytes);

/// The store-key's key of an entry of state `name` of `type`: the whole
/// store key of a value state, the key before the user key of a map state
/// (map_key_prefix), the key after the time of a timer queue.
std::string_view key_of_entry(const std::string& name, state_type type,
                              std::string_view store_key);

/// The key group of a keyed state's key (the operator's key codec knows
/// how its bytes hash).
using key_group_fn = std::function<int32_t(std::string_view key)>;

/// The entries of `keyed_states` (canonical or native snapshots, of one
/// vertex's old subtasks) whose key's group lies in `range`, as one
/// canonical snapshot; "" when none of them holds any state. A timer under
/// no key (a window's processing-time wakeup) goes to every subtask: its
/// firing looks at whichever windows are due, so a copy is harmless. A
/// native RocksDB snapshot whose keys carry groups of `max_parallelism` is
/// read only for `range`. Throws
/// std::runtime_error for malformed bytes or a state that has two types.
std::string select_key_groups(const std::vector<std::string>& keyed_states,
                              key_group_range range,
                              const key_group_fn& group_of,
                              int32_t max_parallelism = 0);

/// The names of the keyed timer queues (operators/keyed_timers), whose
/// store keys are a time then the key.
inline constexpr const char* event_timers_state = "timers/event-time";
inline constexpr const char* processing_timers_state =
  "timers/processing-time";

} // namespace weir::state
