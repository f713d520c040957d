#pragma once

#include <cstdint>
#include <vector>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/deployment.hpp"
#include "messages/record.hpp"

namespace weir {

struct subtask_wiring;

/// One running subtask: the data plane between subtasks and the control
/// messages from its JobMaster.
using subtask_actor = caf::typed_actor<
  /// JobMaster: the consumers of each output; start processing.
  caf::reacts_to<start_atom, subtask_wiring>,
  /// Upstream subtask: batch number `seq` (0, 1, ... per channel) on input
  /// channel `channel`, sent through the producer's output `port`; the
  /// consumer answers with one credit.
  caf::reacts_to<data_atom, int32_t, int32_t, int64_t, record_batch>,
  /// Upstream subtask: input channel `channel` has ended after `batches`
  /// batches.
  caf::reacts_to<end_atom, int32_t, int64_t>,
  /// Downstream subtask: `n` more batches may be sent to consumer `consumer`
  /// of output `port`.
  caf::reacts_to<credit_atom, int32_t, int32_t, int32_t>,
  /// JobMaster (to source subtasks): take checkpoint `id` of kind `kind`
  /// (a state::snapshot_kind) now and send its barrier downstream.
  caf::reacts_to<checkpoint_atom, int64_t, int8_t>,
  /// Self (the thread that wrote a snapshot's files): checkpoint `id`'s
  /// state is complete; acknowledge it.
  caf::reacts_to<checkpoint_atom, int64_t, operator_states>,
  /// Self: writing checkpoint `id`'s state failed with the reason given.
  caf::reacts_to<checkpoint_atom, int64_t, std::string>,
  /// JobMaster: checkpoint `id` completed; sinks publish what it covers.
  caf::reacts_to<commit_atom, int64_t>,
  /// JobMaster or TaskExecutor: stop and report CANCELED.
  caf::reacts_to<cancel_atom>,
  /// Self: produce the next source batch.
  caf::reacts_to<tick_atom>,
  /// Self: the buffer timeout passed; send partly filled batches.
  caf::reacts_to<flush_atom>>;

/// Where a subtask's outputs go: for each output (in deployment order), the
/// consumer subtasks in subtask-index order.
struct subtask_wiring {
  std::vector<std::vector<subtask_actor>> consumers;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, subtask_wiring& x) {
  return f(caf::meta::type_name("subtask_wiring"), x.consumers);
}

} // namespace weir
