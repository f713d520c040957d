#pragma once

#include <vector>

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include "fake_job_store.hpp"
#include "messages/job_master.hpp"
#include "messages/resource_manager.hpp"
#include "messages/task_executor.hpp"

namespace weir::test {

/// A JobMaster that accepts every slot offer and records it.
struct fake_job_master_state {
  std::vector<slot_offer> offers;
  std::vector<resource_id> offered_by;
  /// Allocations the ResourceManager reported lost or failed.
  std::vector<allocation_id> lost;
  /// What the ResourceManager last said of unmet requests.
  std::string unmet;
};

using fake_job_master_impl
  = caf::stateful_actor<fake_job_master_state, job_master_actor::base>;

job_master_actor::behavior_type
fake_job_master(job_master_actor::stateful_pointer<fake_job_master_state> self);

/// A TaskExecutor stand-in that registers `id` with one slot. It refuses
/// every slot grant when `refuse_grants`, and leaves heartbeat requests
/// unanswered (as if its actor were stuck) unless `answer_heartbeats`.
struct fake_task_executor_options {
  resource_id id;
  bool refuse_grants = false;
  bool answer_heartbeats = true;
};

struct fake_task_executor_state {
  std::vector<caf::typed_response_promise<resource_id>> unanswered;
};

task_executor_actor::behavior_type fake_task_executor(
  task_executor_actor::stateful_pointer<fake_task_executor_state> self,
  resource_manager_actor rm, fake_task_executor_options opts);

/// sequence 1..n (parallelism 2) → collect.
job_graph numbers_graph(int64_t n);

} // namespace weir::test
