#pragma once

// The JobMaster actor's private interface, its state and the functions its
// source files share (job_master.cpp: the handlers; job_master_scheduling.cpp:
// scheduling and failover; job_master_checkpoints.cpp: checkpoints and
// savepoints). Internal to the JobMaster: the logic lives in the plain
// classes its state holds.

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor_addr.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include "actors/common/event_log.hpp"
#include "actors/common/heartbeat_monitor.hpp"
#include "actors/job_master/adaptive_parallelism.hpp"
#include "actors/job_master/checkpoint_coordinator.hpp"
#include "actors/job_master/checkpoint_history.hpp"
#include "actors/job_master/checkpoint_requests.hpp"
#include "actors/job_master/collected_results.hpp"
#include "actors/job_master/execution_graph.hpp"
#include "actors/job_master/job_lifecycle.hpp"
#include "actors/job_master/job_master.hpp"
#include "actors/job_master/job_scheduler.hpp"
#include "actors/job_master/job_settings.hpp"
#include "actors/job_master/rescale_operation.hpp"
#include "actors/job_master/deployed_subtasks.hpp"
#include "actors/job_master/slot_assignment.hpp"
#include "actors/job_master/stop_with_savepoint.hpp"
#include "messages/checkpoint.hpp"
#include "messages/task_executor.hpp"
#include "net/log_limiter.hpp"

namespace weir::job_master_detail {

/// The JobMaster's public interface plus the timers it sends itself.
using job_master_self_actor = job_master_actor::extend<
  /// Self: schedule the job (first round), or fail it when its settings
  /// are bad.
  caf::reacts_to<start_atom>,
  /// Self: time to trigger a checkpoint (scheduling round `epoch`).
  caf::reacts_to<trigger_atom, uint64_t>,
  /// Self: the slot request of round `epoch` may have timed out.
  caf::reacts_to<tick_atom, uint64_t>,
  /// Self: the restart delay of round `epoch` has passed.
  caf::reacts_to<restart_atom, uint64_t>,
  /// Self: time to send heartbeats to the TaskExecutors.
  caf::reacts_to<beat_atom>,
  /// Self (adaptive scheduler): time to look at the slots the job could
  /// hold (a round waiting for slots, or a scale-up).
  caf::reacts_to<overview_atom>,
  /// Self: the rescale's checkpoint `id` is past its timeout (also when
  /// no periodic trigger looks at expiry).
  caf::reacts_to<rescale_atom, int64_t>,
  /// Self (a JobMaster taking over its job): ask again which workers hold
  /// the job's slots.
  caf::reacts_to<reconcile_atom>,
  /// Self: subtask `attempt` had ended before the JobMaster watched it; it
  /// fails with the cause unless its own report came meanwhile.
  caf::reacts_to<exited_atom, execution_attempt_id, std::string>>;

/// Requests the JobMaster makes answer within this time.
constexpr auto deploy_timeout = std::chrono::seconds(60);

using jm_scheduler = job_scheduler<caf::actor_addr, subtask_actor>;

struct jm_state {
  job_master_options opts;
  job_settings settings;
  /// Why the job's settings could not be resolved (empty: they were).
  std::string settings_problem;
  dispatcher_actor dispatcher;
  resource_manager_actor rm;
  job_master_id leader = job_master_id::random();
  int64_t start_time_ms = 0;
  std::unique_ptr<job_lifecycle> job;
  /// The current round: execution graph, slots, deployed subtasks.
  std::unique_ptr<jm_scheduler> scheduler;
  /// TaskExecutors that offered slots, watched (monitor, heartbeats).
  std::map<caf::actor_addr, task_executor_actor> executors;
  /// The data port of the TaskExecutor each execution was deployed to, by
  /// flat index (handed to its producers and consumers at start).
  std::vector<data_endpoint> data_ports;
  heartbeat_monitor hb; ///< heartbeats to the executors
  log_limiter refusals; ///< refused requests are logged once a second
  /// Records of the attempts before the current one (restarts): the job's
  /// counters are these plus the current attempt's, so they never go down.
  io_metrics earlier_attempts;
  collected_results collected;
  /// A driver job: what its driver returned, when not 0 (the job fails
  /// with it, without a restart).
  int32_t driver_exit_status = 0;
  std::unique_ptr<checkpoint_coordinator> checkpoints;
  /// Counts and newest checkpoints for the REST API and metrics.
  checkpoint_history checkpoint_stats;
  /// Failures of the job under this JobMaster, oldest first (at most 16).
  std::vector<failure_entry> failures;
  /// Clients waiting for a checkpoint or savepoint they asked for, by id.
  checkpoint_requests requests;
  /// A `weir stop` under way: its savepoint is being taken (the sources
  /// halted) or written (the sources end their input); its client is
  /// answered once the job FINISHED, so it sees the job's final output.
  stop_with_savepoint stop;
  /// A client's rescale under way, the graph it rescales from (a failed
  /// rescale goes back to it) and its checkpoint as a savepoint (what the
  /// next round restores, at either parallelism).
  rescale_operation rescale;
  job_graph rescale_from;
  job_graph rescale_target;
  /// The savepoint form of the checkpoint `rescale_base_id` when the
  /// current graph restores it mapped from another one.
  std::shared_ptr<const savepoint_data> rescale_base;
  int64_t rescale_base_id = 0;
  /// The adaptive scheduler (jobmanager.scheduler: adaptive), if on.
  std::optional<adaptive_parallelism> adaptive;
  /// TaskExecutors lost since the last round was sized (the
  /// ResourceManager may still count their slots).
  std::vector<resource_id> lost_since_sizing;
  /// A round waiting for a first slot, since when, and how it goes on.
  std::optional<std::chrono::steady_clock::time_point> waiting_since;
  std::function<void()> waiting_round;
  /// The round restarts at once: the adaptive scheduler sizes it again.
  bool resize_now = false;
  /// A round is being sized (a second restart message waits for it).
  bool sizing = false;
  /// Since when rounds were sized from slots that did not all come.
  std::optional<std::chrono::steady_clock::time_point> slots_missing_since;
  /// A JobMaster taking over its job: since when and until when it waits
  /// for the workers that kept its subtasks (none: it does not wait).
  std::chrono::steady_clock::time_point reconcile_since;
  std::optional<std::chrono::steady_clock::time_point> reconcile_until;
  /// Adopted subtasks are being told to report here; until each answered
  /// with the newest checkpoint id it saw, no checkpoint may be triggered
  /// (its id could be one the predecessor used).
  bool adopting = false;
  /// The resource id of each TaskExecutor that offered slots.
  std::map<caf::actor_addr, resource_id> executor_ids;
  static inline const char* name = "job_master";
};

using self_ptr = job_master_self_actor::stateful_pointer<jm_state>;

/// Logs an event of this job: "job <id> (<name>) <what>".
template <class... Ts>
void log_job(self_ptr self, fmt::format_string<Ts...> what, Ts&&... xs) {
  auto& g = self->state.scheduler->graph().graph();
  log_eventf("job {} ({}) {}", g.id.to_string(), g.name,
             fmt::format(what, std::forward<Ts>(xs)...));
}

// -- job_master_status.cpp ---------------------------------------------------

/// Logs the job's move from `from` to its current state, if it moved.
void log_transition(self_ptr self, job_state from);

/// Tells the Dispatcher the job's state and slot wait (what `list` and
/// `status` show).
void report_status(self_ptr self);

/// Moves the job to `to` (if allowed) and logs the transition.
void set_state(self_ptr self, job_state to);

/// Whether this jobmanager still leads (job_master_options::leading); if
/// not, logs that it does not `what`.
bool still_leads(self_ptr self, const char* what);

/// The job's live status.
job_status make_status(self_ptr self, bool detailed);

/// Records of every attempt of the job so far (the finished ones and the
/// current one).
io_metrics job_metrics(self_ptr self);

// -- job_master_scheduling.cpp -----------------------------------------------

/// Asks the ResourceManager for the job's slots.
void request_slots(self_ptr self);

/// TaskExecutor `te` (the sender) offers slots; the reply lists the
/// accepted ones, whose subtasks are deployed at once.
std::vector<allocation_id> on_offer(self_ptr self, const resource_id& from,
                                    const std::vector<slot_offer>& offers);

/// A subtask's attempt moved to state `s`.
void on_update(self_ptr self, execution_attempt_id attempt, execution_state s,
               const io_metrics& m, const std::string& error);

/// Allocations died before their TaskExecutor offered them.
void on_allocations_lost(self_ptr self, const std::vector<allocation_id>& lost);

/// Heartbeat requests to every watched TaskExecutor; then the next round.
void send_heartbeats(self_ptr self);

// -- job_master_failover.cpp -------------------------------------------------

/// Fails the job for good.
void fail_job(self_ptr self, std::string cause);

/// A subtask or TaskExecutor failed: restart the job if the restart
/// strategy allows it, else fail it. The failure enters the job's history.
void on_task_failure(self_ptr self, std::string cause,
                     const failure_site& where = {});

/// Stops every subtask that still runs.
void cancel_all(self_ptr self);

/// Ends the job once every subtask stopped (or restarts it after the delay).
void maybe_finalize(self_ptr self);

/// A TaskExecutor died, became unreachable or stopped answering heartbeats.
void on_executor_lost(self_ptr self, const caf::actor_addr& lost,
                      const std::string& reason);

/// Every subtask stopped and the restart delay passed: the next round.
void restart(self_ptr self);

/// restart(), once the round is sized: new attempts, the slot request.
void start_round(self_ptr self);

// -- job_master_checkpoints.cpp ----------------------------------------------

/// Periodic trigger of scheduling round `epoch`.
void trigger_checkpoint(self_ptr self, uint64_t epoch);

/// A subtask acknowledged checkpoint `id`.
void on_checkpoint_ack(self_ptr self, execution_attempt_id attempt, int64_t id,
                       int64_t alignment_ms,
                       operator_states& states);

/// Before the first scheduling: a stored checkpoint, or the savepoint the
/// job starts from, then the slot request.
void load_checkpoint_then_schedule(self_ptr self);

/// A client's `weir checkpoint` or `weir savepoint`/`weir stop`: triggers
/// the checkpoint, or refuses `req` at once.
void request_checkpoint(self_ptr self, checkpoint_request req);

/// A `weir stop` failed before its savepoint was written: the sources it
/// halted produce again.
void stop_failed(self_ptr self);

/// Triggers a checkpoint now (a rescale's); its id.
int64_t trigger_checkpoint_now(self_ptr self);

// -- job_master_rescale.cpp --------------------------------------------------

/// A client's rescale to parallelism `n`: refused at once, or the
/// checkpoint it starts with is triggered; `rp` is answered once every
/// subtask runs at `n`, or refused.
void request_rescale(self_ptr self, int32_t n,
                     caf::typed_response_promise<int32_t> rp);

/// The rescale's checkpoint `cp` is stored: every subtask stops; the next
/// round runs at the new parallelism.
void rescale_checkpoint_taken(self_ptr self, const completed_checkpoint& cp);

/// The rescale under way failed because of `why`: its client is refused;
/// a round at the new parallelism goes back to the old one.
void rescale_failed(self_ptr self, const std::string& why);

/// Starts a rescale to `target` (checked by the caller): its checkpoint is
/// triggered; `reply` says how it ended.
void begin_rescale(self_ptr self, job_graph target,
                   rescale_operation::reply_fn reply);

/// The scheduler rebuilt for `target`, its newest checkpoint mapped onto
/// the new subtasks; an error (nothing changed) when it does not map.
[[nodiscard]] caf::error rebuild_at(self_ptr self, const job_graph& target);

/// restart(): the next round's graph and checkpoint at the parallelism a
/// rescale decided, when one did.
void rebuild_for_rescale(self_ptr self);

// -- job_master_adoption.cpp ------------------------------------------------

/// The first round: a JobMaster that takes over its job adopts the
/// subtasks that workers kept running when they are all of it; else (and
/// for a new job) it asks for slots.
void schedule_first_round(self_ptr self);

/// Self: asks the ResourceManager again which workers hold the job's slots.
void on_reconcile_poll(self_ptr self);

/// Whether the job is being taken over after a failover (its workers
/// asked, or its adopted subtasks not all answered yet).
bool taking_over(self_ptr self);

// -- job_master_adaptive.cpp -------------------------------------------------

/// Sizes the next round from the slots the job could hold (the adaptive
/// scheduler), then `go`, unless the job left state `expected` or its
/// round meanwhile; waits (polled) while there is no slot.
void size_round_then(self_ptr self, job_state expected,
                     std::function<void()> go);

/// The periodic look at the slots: a waiting round is sized again, a
/// running job scales up once more slots stayed available.
void on_adaptive_poll(self_ptr self);

/// The round's slots did not all come: size it again.
void resize_round(self_ptr self, const std::string& why);

/// A subtask runs: answers the rescale once every one of its round does.
void maybe_rescaled(self_ptr self);

} // namespace weir::job_master_detail
