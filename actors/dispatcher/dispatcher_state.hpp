#pragma once

// The Dispatcher's state and the functions its handlers share
// (dispatcher.cpp: clients; dispatcher_job_masters.cpp: supervising the
// JobMasters, recovery, results).

#include <chrono>
#include <optional>

#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/dispatcher/applications.hpp"
#include "actors/dispatcher/dispatcher.hpp"
#include "actors/dispatcher/job_table.hpp"

namespace weir::dispatcher_detail {

using namespace std::chrono_literals;

/// Storage answers within this time or the request fails.
constexpr auto store_timeout = 60s;
constexpr auto job_master_timeout = 60s;

/// The Dispatcher's own timer: the backoff before a new JobMaster for the
/// job whose JobMaster (that incarnation) crashed has passed.
using dispatcher_private_actor
  = dispatcher_actor::extend<caf::reacts_to<restart_atom, job_id, int32_t>,
                             caf::reacts_to<end_atom>>;

/// Driver mode, attached: how long an ended application's cluster waits
/// for its client to fetch the result (it polls the REST API) before it
/// ends anyway (a client that went away).
constexpr auto result_linger = std::chrono::seconds{10};

struct dispatcher_state {
  job_store_actor store;
  resource_manager_actor rm;
  job_master_options jm_opts;
  job_master_factory make_job_master;
  job_table jobs;
  /// Driver mode: applications, and whether this cluster ends with one.
  application_tracker apps;
  bool application_mode = false;
  /// Driver mode, attached: the application ended with this; the cluster
  /// ends once its client fetched the driver job's result (`ending_app`),
  /// or after result_linger.
  std::optional<caf::error> ending;
  job_id ending_app;
  /// Submissions accepted (stored) since this Dispatcher started.
  int64_t submissions = 0;
  static inline const char* name = "dispatcher";
};

using self_ptr = dispatcher_private_actor::stateful_pointer<dispatcher_state>;

/// Starts a JobMaster for `entry` (its next incarnation) and watches it.
void start_job_master(self_ptr self, job_entry& entry);

/// Driver mode: cancels jobs of an application, saying `why`.
void cancel_jobs(self_ptr self, const std::vector<job_id>& ids,
                 const char* why);

/// Stores the result, then answers everyone waiting for it.
void complete(self_ptr self, job_result result);

/// Runs every stored job without a result; a job whose graph cannot be
/// read fails alone.
void recover(self_ptr self, recovered_jobs& rec);

/// Ends every JobMaster (they are monitored, not linked).
void stop_job_masters(self_ptr self, const caf::error& reason);

/// The backoff after a crash has passed: a new JobMaster, unless the job
/// was cancelled meanwhile.
void restart_job_master(self_ptr self, job_id id, int32_t incarnation);

/// A JobMaster ended: restarted with a new ResourceManager, or after a
/// crash within its job's restart intensity; else its job fails.
void on_job_master_down(self_ptr self, const caf::down_msg& dm);

} // namespace weir::dispatcher_detail
