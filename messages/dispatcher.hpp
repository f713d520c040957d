#pragma once

#include <vector>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/barrier.hpp"
#include "messages/ids.hpp"
#include "messages/job_graph.hpp"
#include "messages/job_result.hpp"
#include "messages/resource_manager.hpp"

namespace weir {

/// The Dispatcher: clients' entry point (Flink's DispatcherGateway).
using dispatcher_actor = caf::typed_actor<
  /// Client: submit a job. The reply comes after the JobGraph is stored
  /// (synced); a duplicate id or an invalid graph (validate_job_graph:
  /// vertex ids, library and file names and hashes included) is refused.
  caf::replies_to<submit_atom, job_graph>::with<job_id>,
  /// Client: store a user library or file of a job about to be submitted,
  /// by content hash (synced; the reply comes after). A hash that is not
  /// one (is_content_hash) is refused with `errc::invalid_job`.
  caf::replies_to<blob_atom, put_atom, std::string, std::string>::with<bool>,
  /// Client: every known job, running or ended.
  caf::replies_to<list_atom>::with<std::vector<job_status>>,
  /// Client: one job's live status, with every subtask if `detailed` (and
  /// the job still runs).
  caf::replies_to<status_atom, job_id, bool>::with<job_status>,
  /// Client: cancel a job; the reply is its state before and after the
  /// request (before terminal: it had ended already).
  caf::replies_to<cancel_atom, job_id>::with<cancel_outcome>,
  /// Client: take a checkpoint of a running job now (a full one, sharing no
  /// files with earlier checkpoints, when the flag is set); the reply is
  /// its id, once it completed.
  caf::replies_to<take_checkpoint_atom, job_id, bool>::with<int64_t>,
  /// Client: take a savepoint of a running job into directory `dir`, and
  /// stop the job after it when `stop`; the reply is the savepoint's path.
  caf::replies_to<savepoint_atom, job_id, std::string, savepoint_mode>::with<std::string>,
  /// Client: run every vertex of a running job at parallelism `n`, in
  /// place (from a checkpoint taken now); the reply is `n` once every
  /// subtask runs at it and the JobGraph with it is stored.
  caf::replies_to<rescale_atom, job_id, int32_t>::with<int32_t>,
  /// Client: the rows the job's collect sinks gathered so far, from the
  /// `offset`-th on (a driver's output while it runs).
  caf::replies_to<collect_atom, job_id, int64_t>::with<
    std::vector<collected_table>>,
  /// Client: the job's JobGraph, as submitted (no vertices when only its
  /// result is left: a job that ended before this jobmanager started).
  caf::replies_to<graph_atom, job_id>::with<job_graph>,
  /// Client: the job's result, answered once the job has ended.
  caf::replies_to<result_atom, job_id>::with<job_result>,
  /// Client (metrics): jobs submitted and accepted (stored) since this
  /// Dispatcher started.
  caf::replies_to<metrics_atom>::with<int64_t>,
  /// JobMaster: its job's state or slot wait changed (what `list` and
  /// `status` show; sent before any reply that follows the change).
  caf::reacts_to<update_atom, job_status>,
  /// JobMaster: its job reached a terminal state.
  caf::reacts_to<done_atom, job_result>,
  /// Supervisor: the ResourceManager was restarted; this is the new one.
  /// Every JobMaster is replaced by one that talks to it (their jobs lost
  /// their TaskExecutors with the old one anyway).
  caf::reacts_to<rm_changed_atom, resource_manager_actor>>;

} // namespace weir
