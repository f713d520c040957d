#pragma once

#include <string>
#include <vector>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/checkpoint.hpp"
#include "messages/job_graph.hpp"
#include "messages/job_result.hpp"

namespace weir {

/// A stored job whose graph cannot be read or decoded: it fails alone.
struct unreadable_job {
  job_id id;
  /// Names the record (or its file) and the error.
  std::string problem;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, unreadable_job& x) {
  return f(caf::meta::type_name("unreadable_job"), x.id, x.problem);
}

/// What the Dispatcher needs to recover: stored graphs, stored results, a
/// line for every record that could not be read (named by key), and the
/// jobs among them.
struct recovered_jobs {
  std::vector<job_graph> graphs;
  std::vector<job_result> results;
  std::vector<std::string> problems;
  std::vector<unreadable_job> unreadable;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, recovered_jobs& x) {
  return f(caf::meta::type_name("recovered_jobs"), x.graphs, x.results,
           x.problems, x.unreadable);
}

/// A detached actor owning the job-graph and job-result stores, so that
/// synced writes never block the Dispatcher's thread.
using job_store_actor = caf::typed_actor<
  /// Dispatcher: everything stored, for recovery.
  caf::replies_to<load_atom>::with<recovered_jobs>,
  /// Dispatcher: store a submitted graph (synced) before acknowledging it.
  caf::replies_to<put_atom, job_graph>::with<bool>,
  /// Dispatcher: record a terminal result (dirty), drop the graph, then mark
  /// the result clean; all synced.
  caf::replies_to<finish_atom, job_result>::with<bool>,
  /// Dispatcher: record the result of a job whose stored graph cannot be
  /// read (synced), keeping that record for an operator to inspect.
  caf::replies_to<put_atom, job_result>::with<bool>,
  /// JobMaster: store a completed checkpoint of a job, keeping the newest
  /// `retained`; the reply is the file written ("" when this cluster keeps
  /// checkpoints in memory only).
  caf::replies_to<checkpoint_atom, job_id, checkpoint_snapshot,
                  int32_t>::with<std::string>,
  /// JobMaster: the job's newest stored checkpoint that reads back.
  caf::replies_to<load_atom, job_id>::with<loaded_checkpoint>,
  /// JobMaster: write a savepoint to the file `path` (synced); the reply is
  /// the path.
  caf::replies_to<savepoint_atom, std::string, savepoint_data>::with<std::string>,
  /// JobMaster: read the savepoint at `path`.
  caf::replies_to<savepoint_atom, std::string>::with<savepoint_data>,
  /// Dispatcher: store a user library or file under its content hash
  /// (synced).
  caf::replies_to<blob_atom, put_atom, std::string, std::string>::with<bool>,
  /// JobMaster (for a TaskExecutor): the blob with this content hash.
  caf::replies_to<blob_atom, std::string>::with<std::string>>;

} // namespace weir
