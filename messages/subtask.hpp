#pragma once

#include <cstdint>
#include <vector>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/barrier.hpp"
#include "messages/data_frame.hpp"
#include "messages/deployment.hpp"
#include "messages/job_master.hpp"
#include "messages/row_batch.hpp"

namespace weir {

struct subtask_wiring;

/// One running subtask: the data plane between subtasks and the control
/// messages from its JobMaster. Each message has one meaning; the subtask's
/// timers and its snapshot writer use a private extension of this interface
/// (actors/task_executor/subtask.cpp).
///
/// On each input channel, batches and barriers share one numbering (0, 1,
/// ... per channel), so the consumer processes them in the order sent even
/// when messages took different network paths.
using subtask_actor = caf::typed_actor<
  /// JobMaster: the consumers of each output; start processing.
  caf::reacts_to<start_atom, subtask_wiring>,
  /// Upstream subtask: event number `seq` of input channel `channel` is a
  /// batch, sent through the producer's output `port` against a credit;
  /// the consumer gives the credit back once it processed it.
  caf::reacts_to<data_atom, int32_t, int32_t, int64_t, row_batch>,
  /// Upstream subtask: event number `seq` of input channel `channel` is a
  /// checkpoint barrier, sent through the producer's output `port` after
  /// everything the producer emitted before its snapshot; answered with one
  /// credit, as a batch.
  caf::reacts_to<barrier_atom, int32_t, int32_t, int64_t, checkpoint_barrier>,
  /// Upstream subtask: event number `seq` of input channel `channel` is a
  /// watermark at event time `time` (ms), or, when `idle`, the channel
  /// idles (dataplane/watermark_valve.hpp); sent through the producer's
  /// output `port` against a credit, as a batch.
  caf::reacts_to<watermark_atom, int32_t, int32_t, int64_t, int64_t, bool>,
  /// Upstream subtask: input channel `channel` has ended after `events`
  /// numbered events (batches and barriers).
  caf::reacts_to<end_atom, int32_t, int64_t>,
  /// Upstream subtask: `waiting` events of input channel `channel`, from
  /// the producer's output `port`, wait for credit (the consumer grants
  /// some: dataplane/input_credits.hpp).
  caf::reacts_to<backlog_atom, int32_t, int32_t, int32_t>,
  /// Data service: a batch, barrier or end from a producer on taskmanager
  /// `from`, which came over its data connection (the header says which
  /// and where; a batch's payload is its wire form). Credits for it go
  /// back over that connection.
  caf::reacts_to<frame_atom, resource_id, frame_header, std::vector<char>>,
  /// Data service: the data connection to a taskmanager this subtask
  /// exchanges with could not be made, or dropped: fail, saying why.
  caf::reacts_to<lost_atom, std::string>,
  /// Downstream subtask: `n` more events may be sent to consumer `consumer`
  /// of output `port`.
  caf::reacts_to<credit_atom, int32_t, int32_t, int32_t>,
  /// JobMaster (to source subtasks): take the barrier's checkpoint now and
  /// send the barrier downstream.
  caf::reacts_to<trigger_atom, checkpoint_barrier>,
  /// JobMaster (to source subtasks), for `weir stop`: take the barrier's
  /// savepoint, send the barrier downstream, then produce nothing more
  /// until told to finish or resume (Flink's synchronous savepoint).
  caf::reacts_to<stop_atom, checkpoint_barrier>,
  /// JobMaster (to sources a stop_atom halted): the stop's savepoint is
  /// written: end the input here, so every subtask finishes (sinks publish
  /// their output) and the job FINISHES.
  caf::reacts_to<finish_atom>,
  /// JobMaster (to sources a stop_atom halted): the stop failed; produce
  /// again.
  caf::reacts_to<resume_atom>,
  /// JobMaster: checkpoint `id` completed; sinks publish what it covers.
  caf::reacts_to<commit_atom, int64_t>,
  /// JobMaster or TaskExecutor: stop and report CANCELED.
  caf::reacts_to<cancel_atom>,
  /// JobMaster that adopted the job after a failover: report to it from
  /// now on; the reply is the newest checkpoint id this subtask has seen
  /// (the JobMaster's next checkpoint comes after it).
  caf::replies_to<adopt_atom, job_master_actor>::with<int64_t>>;

/// Where one consumer subtask runs: its attempt, on the taskmanager with
/// this data port.
struct consumer_address {
  execution_attempt_id attempt;
  data_endpoint where;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, consumer_address& x) {
  return f(caf::meta::type_name("consumer_address"), x.attempt, x.where);
}

/// Where a subtask's outputs go: for each output (in deployment order), the
/// consumer subtasks in subtask-index order. Batches for a consumer on
/// another taskmanager with a data port travel over a data connection
/// (the consumer's address); the rest as messages to its actor.
struct subtask_wiring {
  std::vector<std::vector<subtask_actor>> consumers;
  /// The consumers' addresses, as `consumers` (empty: none known).
  std::vector<std::vector<consumer_address>> addresses;
  /// The data ports of the taskmanagers running this subtask's producers.
  std::vector<data_endpoint> producers;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, subtask_wiring& x) {
  return f(caf::meta::type_name("subtask_wiring"), x.consumers, x.addresses,
           x.producers);
}

} // namespace weir
