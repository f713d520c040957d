#pragma once

#include <cstdint>
#include <vector>

#include <caf/replies_to.hpp>
#include <caf/typed_actor.hpp>

#include "messages/atoms.hpp"
#include "messages/ids.hpp"
#include "messages/job_master.hpp"
#include "messages/slots.hpp"
#include "messages/task_executor.hpp"

namespace weir {

/// Number of registered TaskExecutors and slots (for clients and tests).
struct cluster_overview {
  int32_t task_executors = 0;
  int32_t slots_total = 0;
  int32_t slots_free = 0;
  int32_t pending_requests = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cluster_overview& x) {
  return f(caf::meta::type_name("cluster_overview"), x.task_executors,
           x.slots_total, x.slots_free, x.pending_requests);
}

/// One registered TaskExecutor (Flink's TaskManagerInfo).
struct task_manager_info {
  resource_id id;
  int32_t slots_total = 0;
  int32_t slots_free = 0;
  /// When the ResourceManager last heard from it (wall clock, ms; its
  /// registration when no heartbeat came yet), and how long its last
  /// heartbeat request took to be answered (microseconds; -1: none yet).
  int64_t last_heartbeat_ms = 0;
  int64_t heartbeat_rtt_us = -1;
  hardware_description hardware;
  /// Its data port, as it registered (port 0: none).
  data_endpoint data;
  /// Each slot's profile and, when allocated, its job.
  std::vector<slot_status> slots;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_manager_info& x) {
  return f(caf::meta::type_name("task_manager_info"), x.id, x.slots_total,
           x.slots_free, x.last_heartbeat_ms, x.heartbeat_rtt_us, x.hardware,
           x.data, x.slots);
}

/// A registered TaskExecutor that holds slots of a job (what a JobMaster
/// taking over the job after a failover asks it about).
struct job_slot_holder {
  resource_id id;
  task_executor_actor te;
  data_endpoint data;
  /// The job's slots there.
  int32_t slots = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_slot_holder& x) {
  return f(caf::meta::type_name("job_slot_holder"), x.id, x.te, x.data,
           x.slots);
}

/// The ResourceManager (Flink's ResourceManagerGateway): what others send it.
/// Its own timers are in its private interface
/// (actors/resource_manager/resource_manager.hpp).
using resource_manager_actor = caf::typed_actor<
  /// TaskExecutor: register with its slots; the reply is the current leader's
  /// fencing token, which the TaskExecutor checks on later slot requests.
  caf::replies_to<register_atom, resource_id, task_executor_actor,
                  slot_report>::with<resource_manager_id>,
  /// JobMaster: request slots for its job; the reply is the number of
  /// requests now pending. A second JobMaster for the same job is refused.
  caf::replies_to<request_atom, job_master_id, job_id, job_master_actor,
                  std::vector<slot_request>>::with<int32_t>,
  /// TaskExecutor: these slots are free again.
  caf::reacts_to<free_atom, resource_id, std::vector<allocation_id>>,
  /// JobMaster: the job ended; drop its pending requests.
  caf::reacts_to<disconnect_atom, job_id, job_master_id>,
  /// Client or test: registered TaskExecutors and slots.
  caf::replies_to<overview_atom>::with<cluster_overview>,
  /// JobMaster (adaptive scheduler): the slots job `job` could hold now,
  /// the free ones and its own, on registered TaskExecutors other than
  /// `lost` (ones the JobMaster lost, which this may not know yet).
  caf::replies_to<overview_atom, job_id, std::vector<resource_id>>::with<
    int32_t>,
  /// JobMaster taking over job `job` after a failover: the registered
  /// TaskExecutors that hold slots of it.
  caf::replies_to<reconcile_atom, job_id>::with<
    std::vector<job_slot_holder>>,
  /// Client (REST, metrics): every registered TaskExecutor, in
  /// registration order.
  caf::replies_to<list_atom>::with<std::vector<task_manager_info>>,
  /// Client (REST): TaskExecutor `id`'s log files, and a piece of one
  /// (asked of the TaskExecutor, on its host); invalid_request for an id
  /// not registered.
  caf::replies_to<log_atom, resource_id>::with<std::vector<log_file>>,
  caf::replies_to<log_atom, resource_id, std::string, int64_t>::with<
    std::string>,
  /// Jobmanager (driver mode): it listens at this address; an active
  /// ResourceManager may start workers that connect there now.
  caf::reacts_to<start_atom, std::string>,
  /// Worker launcher: a worker process it started has ended.
  /// `why` is "" for a worker that ran, else why it could not start (the
  /// launcher's text, e.g. sbatch's).
  caf::reacts_to<exited_atom, resource_id, std::string>>;

} // namespace weir
