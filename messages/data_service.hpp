#pragma once

#include <string>
#include <vector>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/data_frame.hpp"
#include "messages/subtask.hpp"

namespace weir {

/// A taskmanager's data service: its data port and its data connections,
/// one per peer taskmanager, which carry every batch, barrier, end and
/// credit between their subtasks (docs/architecture.md § Data plane).
/// Frames that arrive go to the local subtask their header names.
using data_service_actor = caf::typed_actor<
  /// Subtask (when started): it exchanges data with subtasks on these
  /// taskmanagers. The service connects to those it dials (the one with
  /// the smaller id dials) and tells the subtask (lost_atom) when a
  /// connection cannot be made or drops.
  caf::reacts_to<caf::connect_atom, std::vector<data_endpoint>, subtask_actor>,
  /// Subtask: send a frame (its header; the payload, a batch's wire form
  /// or empty) to taskmanager `to`.
  caf::reacts_to<send_atom, resource_id, frame_header, std::string>>;

} // namespace weir
