#pragma once

#include <string>
#include <vector>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/barrier.hpp"
#include "messages/deployment.hpp"
#include "messages/ids.hpp"
#include "messages/job_result.hpp"
#include "messages/collected_rows.hpp"
#include "messages/slots.hpp"
#include "messages/states.hpp"

namespace weir {

/// The JobMaster of one job (Flink's JobMasterGateway): what other actors
/// and clients send it. The timers it sends itself are private
/// (actors/job_master/job_master_state.hpp).
using job_master_actor = caf::typed_actor<
  /// TaskExecutor: offers allocated slots; the reply lists the accepted ones.
  /// The sender is the offering TaskExecutor.
  caf::replies_to<offer_atom, resource_id, std::vector<slot_offer>>::with<
    std::vector<allocation_id>>,
  /// Subtask: its attempt moved to a new state (with counters, and the failure
  /// cause when FAILED).
  caf::reacts_to<update_atom, execution_attempt_id, execution_state, io_metrics,
                 std::string>,
  /// TaskExecutor's crash watch: user code of subtask `attempt` crashed its
  /// process (the cause names the operator and the signal); the subtask
  /// failed. The reply (true: a current attempt) lets the process die.
  caf::replies_to<crashed_atom, execution_attempt_id, std::string>::with<bool>,
  /// Driver: the driver returned this status (not 0), sent just before its
  /// subtask fails: the application's exit status (job_result::exit_status).
  /// The job then fails without a restart: the driver chose to end.
  caf::reacts_to<exit_status_atom, execution_attempt_id, int32_t>,
  /// TaskExecutor: a user library or file of the job, by content hash; a
  /// hash that is not one (invalid_job) or not the job's (blob_not_found)
  /// is refused.
  caf::replies_to<blob_atom, std::string>::with<std::string>,
  /// Subtask: progress counters, sent now and then while running.
  caf::reacts_to<metrics_atom, execution_attempt_id, io_metrics>,
  /// Subtask: it took checkpoint `id` after aligning its barriers for
  /// that many ms (0: a source, or one input); its operators' state.
  caf::reacts_to<checkpoint_atom, execution_attempt_id, int64_t, int64_t,
                 operator_states>,
  /// Collect sink: rows for the job result.
  caf::reacts_to<collect_atom, execution_attempt_id, collected_table>,
  /// Dispatcher: the rows collected so far (in sink-subtask order), from
  /// the `offset`-th on; for streaming a driver's output.
  caf::replies_to<collect_atom, int64_t>::with<std::vector<collected_table>>,
  /// Dispatcher: the job's live status, with every subtask if `detailed`.
  caf::replies_to<status_atom, bool>::with<job_status>,
  /// Dispatcher: take a checkpoint now (full when the flag is set); the
  /// reply is its id once completed.
  caf::replies_to<take_checkpoint_atom, bool>::with<int64_t>,
  /// Dispatcher: take a savepoint into `dir` (stopping the job after it when
  /// `stop`); the reply is its path.
  caf::replies_to<savepoint_atom, std::string, savepoint_mode>::with<std::string>,
  /// Dispatcher: run every vertex at parallelism `n` from a checkpoint
  /// taken now (docs/state.md § Rescaling a running job); the reply is
  /// `n` once every subtask runs at it.
  caf::replies_to<rescale_atom, int32_t>::with<int32_t>,
  /// Dispatcher: cancel the job; the reply is its state before and after
  /// the request.
  caf::replies_to<cancel_atom>::with<cancel_outcome>,
  /// ResourceManager: these allocations died with their TaskExecutor (perhaps
  /// before it could offer them).
  caf::reacts_to<free_atom, std::vector<allocation_id>>,
  /// ResourceManager: why the job's pending slot requests are unmet ("":
  /// they are not, or no more).
  caf::reacts_to<unmet_atom, std::string>,
  /// ResourceManager (high priority): a heartbeat request; the reply is the
  /// job's id.
  caf::replies_to<heartbeat_atom>::with<job_id>>;

} // namespace weir
