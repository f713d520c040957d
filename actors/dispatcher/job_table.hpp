#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <caf/actor_addr.hpp>
#include <caf/typed_response_promise.hpp>

#include "actors/supervisor/restart_intensity.hpp"
#include "messages/job_graph.hpp"
#include "messages/job_master.hpp"
#include "messages/job_result.hpp"
#include "messages/job_store.hpp"

namespace weir {

/// One job the Dispatcher knows: its graph, its current JobMaster, its
/// result, and the clients waiting for the result.
struct job_entry {
  job_graph graph;
  job_master_actor jm;
  /// What the current JobMaster last reported of the job (its state, its
  /// slot wait): the one view `list` and `status` show while it runs.
  std::optional<job_status> live;
  /// Checkpoint statistics and failures of its last JobMaster, kept from
  /// its final report once the job ended (a result does not store them).
  checkpoint_stats checkpoints;
  std::vector<failure_entry> exceptions;
  /// The stored result.
  std::optional<job_result> result;
  /// The result being stored: the job's JobMaster has ended (its result was
  /// its last message). Requests are answered from it meanwhile, never from
  /// the ended JobMaster; result requests wait until it is stored.
  std::optional<job_result> completing;
  /// A cancel arrived before the job was stored and its JobMaster started.
  bool cancel_requested = false;
  /// Recovered from the state directory when the Dispatcher started.
  bool recovered = false;
  /// Its stored graph cannot be read: it fails at recovery, and its
  /// result is stored beside that record, which stays.
  bool unreadable = false;
  int64_t submitted_ms = 0;
  /// JobMasters started for this job so far, minus one.
  int32_t incarnation = -1;
  /// The ResourceManager the current JobMaster talks to.
  caf::actor_addr rm_of_jm;
  /// The JobMaster ended with its ResourceManager; a new one starts with
  /// the next ResourceManager.
  bool awaiting_rm = false;
  /// Crashes of the job's JobMasters within the job's restart intensity.
  restart_intensity crashes;
  /// Its JobMaster crashed; a new one starts after a backoff (RESTARTING).
  bool restart_pending = false;
  /// Clients waiting for the result: the newest request of each client (a
  /// client that re-asks after a timeout replaces its older request).
  std::map<caf::actor_addr, caf::typed_response_promise<job_result>> waiting;

  /// Whether the job has a result or one is being stored.
  bool ending() const { return result.has_value() || completing.has_value(); }

  /// The job's result, stored or being stored; nullptr while it runs.
  const job_result* ended_with() const {
    return result ? &*result : completing ? &*completing : nullptr;
  }
};

/// The Dispatcher's table of jobs (a plain class): which jobs exist, which
/// JobMaster runs each, and the decisions that follow from it (idempotent
/// submission, recovery, what to do when a JobMaster ends).
class job_table {
public:
  /// `per_job`: how often each job's JobMaster may crash
  /// (jobmanager.supervision.*) before the job fails.
  explicit job_table(supervision_options per_job = {});

  /// What a JobMaster's end means for its job.
  enum class job_master_end {
    /// Not a current JobMaster, or its job is ending anyway.
    ignore,
    /// It lost its ResourceManager, and a newer one is known: start a new
    /// JobMaster now.
    restart,
    /// It lost its ResourceManager: start a new JobMaster with the next
    /// one (rm_changed).
    await_resource_manager,
    /// It crashed: restart it within the restart intensity.
    crashed,
  };

  /// The job, or nullptr.
  job_entry* find(const job_id& id);

  /// A submission of `g` whose id is known already: whether it is the same
  /// job again (idempotent: answered with its id), compared by graph, by
  /// the stored result's graph fingerprint when only the result is left,
  /// by name for older results. nullopt: the id is new.
  std::optional<bool> same_as_known(const job_graph& g) const;

  /// Enters a submitted job (to be stored before it runs).
  job_entry& add(job_graph g, int64_t now_ms);

  /// Forgets a job whose graph could not be stored.
  void erase(const job_id& id);

  /// Recovery: enters the stored results and the stored graphs without a
  /// result (a finished job never runs twice). Returns the recovered jobs
  /// to run, in the order stored.
  std::vector<job_id> recover(const recovered_jobs& rec, int64_t now_ms);

  /// JobMaster `jm` now runs the job of `e`, talking to ResourceManager
  /// `rm`.
  void started(job_entry& e, job_master_actor jm, caf::actor_addr rm);

  /// JobMaster `jm` reports its job's status (ignored unless it is the
  /// job's current JobMaster and the job is not ending).
  void reported(const caf::actor_addr& jm, job_status s);

  /// The job's status as `list` and `status` show it: its result's (stored
  /// or being stored), what its JobMaster reported, or CREATED (submitted,
  /// no JobMaster report yet; CANCELLING when a cancel came first).
  static job_status status_of(const job_id& id, const job_entry& e);
  /// status_of without the recovered flag.
  static job_status current_status(const job_id& id, const job_entry& e);

  /// What to do about the job of an ended JobMaster.
  struct end_decision {
    job_master_end what = job_master_end::ignore;
    job_id job;
  };

  /// JobMaster `jm` ended (`leader_lost`: with its ResourceManager; `rm`
  /// is the current ResourceManager).
  end_decision job_master_ended(const caf::actor_addr& jm, bool leader_lost,
                                const caf::actor_addr& rm);

  /// What a JobMaster's crash means for its job.
  struct crash_decision {
    /// Start a new JobMaster after `delay` (restart_due); else the job
    /// fails with `failure`.
    bool restart = false;
    std::chrono::milliseconds delay{0};
    /// Restarts of the job within its window, this one included.
    int restarts = 0;
    /// The job's limit: "3 restarts within 60000 ms".
    std::string limit;
    /// The job's FAILED result when it is not restarted: "its JobMaster
    /// crashed N times within W ms (last: REASON)".
    job_result failure;
  };

  /// The JobMaster of job `id` crashed with `reason` at `now` (wall clock
  /// `now_ms`), as job_master_ended said. Within the job's restart
  /// intensity it starts again after restart_intensity::backoff (the job
  /// is RESTARTING until then); past it the job fails, and only that job.
  crash_decision job_master_crashed(const job_id& id,
                                    restart_intensity::clock::time_point now,
                                    const std::string& reason, int64_t now_ms);

  /// The backoff of a restart job_master_crashed allowed has passed: the
  /// job, unless it is ending or a JobMaster was started for it since
  /// (`incarnation` is the one that crashed); nullptr otherwise.
  job_entry* restart_due(const job_id& id, int32_t incarnation);

  /// A new ResourceManager: the jobs whose JobMaster waited for it.
  std::vector<job_id> awaiting_resource_manager() const;

  /// Starts storing the job's result `r` (its JobMaster, if any, has
  /// ended): the entry, which keeps `r` meanwhile, or nullptr when the job
  /// is unknown or already ending.
  job_entry* begin_completion(job_result r);

  /// The job's result is stored (`problem`: why it could not be, added to
  /// its error): keeps it, answers everyone waiting.
  job_entry& completed(const job_id& id, const std::string& problem = {});

  /// Every job with its state (running, created, or its result's).
  std::vector<job_status> list() const;

  /// The running JobMasters.
  std::vector<job_master_actor> job_masters() const;

  /// A job's status from its result.
  static job_status status_of(const job_result& r);

  /// The rows a finished job collected, from the `offset`-th on, as many
  /// as fit into `max_bytes` (at least one).
  static std::vector<collected_table>
  collected_from(const job_result& r, int64_t offset, size_t max_bytes);

  /// The result of a job cancelled before it was stored and started.
  static job_result canceled_before_start(const job_id& id,
                                          const std::string& name,
                                          int64_t now_ms);

  /// The result of a job that cannot start (a recovered graph whose
  /// schemas do not fit), FAILED with `error`.
  static job_result failed_before_start(const job_id& id,
                                        const std::string& name,
                                        std::string error, int64_t now_ms);

private:
  supervision_options per_job_;
  std::map<job_id, job_entry> jobs_;
  std::map<caf::actor_addr, job_id> job_by_jm_;
};

} // namespace weir
