#pragma once

#include "messages/barrier.hpp"
#include "storage/state/keyed_backend.hpp"

namespace weir {

/// The kind of snapshot a checkpoint of kind `x` takes of keyed state.
constexpr state::snapshot_kind to_snapshot_kind(checkpoint_kind x) {
  switch (x) {
    case checkpoint_kind::full_checkpoint:
      return state::snapshot_kind::full_checkpoint;
    case checkpoint_kind::savepoint:
      return state::snapshot_kind::savepoint;
    default:
      return state::snapshot_kind::checkpoint;
  }
}

/// The checkpoint kind that takes snapshots of kind `x`.
constexpr checkpoint_kind to_checkpoint_kind(state::snapshot_kind x) {
  switch (x) {
    case state::snapshot_kind::full_checkpoint:
      return checkpoint_kind::full_checkpoint;
    case state::snapshot_kind::savepoint:
      return checkpoint_kind::savepoint;
    default:
      return checkpoint_kind::checkpoint;
  }
}

} // namespace weir
