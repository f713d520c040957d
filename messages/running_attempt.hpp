#pragma once

#include <cstdint>
#include <string>

#include <caf/meta/type_name.hpp>

#include "messages/ids.hpp"
#include "messages/subtask.hpp"

namespace weir {

/// A subtask a TaskExecutor runs, as it reports it to a JobMaster that takes
/// over the job after a failover (docs/state.md § Jobmanager failover
/// without task restarts): enough to match it to an execution of the
/// JobGraph and to adopt it.
struct running_attempt {
  execution_attempt_id attempt;
  int32_t attempt_number = 0;
  int32_t task_index = 0;
  int32_t subtask_index = 0;
  int32_t parallelism = 1;
  /// The id of its chain's first vertex (a different graph: no match).
  std::string head;
  allocation_id alloc;
  subtask_actor handle;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, running_attempt& x) {
  return f(caf::meta::type_name("running_attempt"), x.attempt,
           x.attempt_number, x.task_index, x.subtask_index, x.parallelism,
           x.head, x.alloc, x.handle);
}

} // namespace weir
