#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <caf/error.hpp>
#include <caf/make_message.hpp>

namespace weir {

/// Errors of weir's control plane, carried as `caf::error` with category
/// "weir" and a one-line context message.
enum class errc : uint8_t {
  /// Not an error.
  none = 0,
  /// A job spec or JobGraph is malformed (the context names the field).
  invalid_job,
  /// A job with this id already exists.
  duplicate_job,
  /// No job with this id is known.
  unknown_job,
  /// A request carried a fencing token of a replaced leader.
  fencing_token_mismatch,
  /// A slot or allocation is unknown or already taken.
  slot_unavailable,
  /// The storage layer failed (the context names the store and key).
  storage_failure,
  /// An operator failed while running (the context names the vertex).
  operator_failure,
  /// The job was canceled.
  canceled,
  /// A peer did not answer in time.
  timeout,
  /// Another process holds the state directory (RocksDB's LOCK file).
  storage_locked,
  /// A supervisor's children crashed more often than its restart intensity
  /// allows.
  supervision_gave_up,
  /// A JobMaster lost its Dispatcher or ResourceManager and ended; its job
  /// goes on under a new one.
  leader_lost,
  /// An actor ended with an uncaught exception (the context says which).
  crashed,
  /// Driver mode: the application ended and its driver and jobs finished
  /// (the cluster ends with exit code 0).
  application_finished,
  /// Driver mode: the application ended and its driver or a job failed
  /// (the context says why; the cluster ends with exit code 1).
  application_failed,
  /// The request needs a running job (a checkpoint, a savepoint), and the
  /// job is not running (not yet started, ended, or some of its subtasks
  /// have finished).
  not_running,
  /// A checkpoint was abandoned before it completed (the job restarted or
  /// ended).
  checkpoint_aborted,
  /// The cluster's blob store holds no blob with this content hash (a user
  /// library or file of a job).
  blob_not_found,
  /// A configuration value is unknown, malformed or inconsistent (the
  /// context names the key and where it came from: a file, a -D argument,
  /// a job's config).
  invalid_config,
  /// Stored data failed its checksum (a damaged write-ahead log or table
  /// file of the state directory; the context names the file). Persistent:
  /// retrying does not help, `weir repair-state` does.
  storage_corrupt,
  /// The actor a client's request went to is gone: its process died, its
  /// connection dropped after missing heartbeats, or it ended (the context
  /// says why).
  peer_lost,
  /// A TaskExecutor refused a deployment whose subtasks need more network
  /// buffers than it has free (taskmanager.memory.network.max); a restart
  /// would not help, so the job fails.
  insufficient_network_buffers,
  /// The ResourceManager refused a TaskExecutor's registration: its
  /// process's certificate is not a node's (a taskmanager with one does
  /// not start; only a peer that is not weir's taskmanager gets this).
  registration_refused,
  /// A peer sent what weir's protocol does not allow (a frame the guard in
  /// front of CAF's BASP refuses); the connection is closed and the
  /// context says why.
  protocol_violation,
  /// A REST request is malformed: its body, a field or a path parameter
  /// (the context names it). Answered 400, or 413 for a body too large.
  invalid_request,
};

std::string to_string(errc x);

/// The code to_string named (not "none"); nothing for any other text.
std::optional<errc> parse_errc(std::string_view name);

/// The error category atom ("weir").
caf::atom_value errc_category();

/// Builds an error of `code` with a one-line description.
[[nodiscard]] caf::error make_error(errc code, std::string context = {});

/// The one-line description of an error: the context string for weir errors,
/// CAF's own rendering otherwise.
std::string describe(const caf::error& err);

} // namespace weir
