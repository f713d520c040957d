#pragma once

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/deployment.hpp"
#include "messages/job_master.hpp"

namespace weir {

/// A TaskExecutor's helper for user code (a detached actor: it hashes,
/// reads and writes files): finds a job's libraries and files on this node
/// or fetches them from the job's JobMaster into its cache.
using code_resolver_actor = caf::typed_actor<
  /// TaskExecutor: the local paths of `code`; blobs this node lacks come
  /// from `jm`. An error names what could not be found or written, or
  /// the name or hash that is refused (`errc::invalid_job`).
  caf::replies_to<blob_atom, user_code, job_master_actor>::with<local_code>>;

} // namespace weir
