#pragma once

#include <vector>

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "messages/job_store.hpp"

namespace weir::test {

/// A job store in memory, pre-filled with what "was stored before", that
/// records every write.
struct fake_job_store_state {
  recovered_jobs stored;
  std::vector<job_graph> puts;
  std::vector<job_result> dones;
  /// While set, result writes are not answered: their replies wait in
  /// `held` (a slow synced write).
  bool hold_results = false;
  std::vector<caf::typed_response_promise<bool>> held;
  /// Hashes of the blobs put.
  std::vector<std::string> blob_puts;
};

using fake_job_store_impl
  = caf::stateful_actor<fake_job_store_state, job_store_actor::base>;

job_store_actor::behavior_type
fake_job_store(job_store_actor::stateful_pointer<fake_job_store_state> self,
               recovered_jobs stored);

} // namespace weir::test
