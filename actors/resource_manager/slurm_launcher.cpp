#include "actors/resource_manager/slurm_launcher.hpp"

#include <chrono>
#include <memory>

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <fmt/format.h>

#include "actors/common/event_log.hpp"
#include "os/command.hpp"

namespace weir {

namespace {

using namespace std::chrono_literals;

/// The longest sbatch may take (a slurmctld that does not answer makes it
/// retry for a long time).
constexpr auto command_deadline = 30s;

/// The longest squeue and scancel may take: polls and cancels must not hold
/// up the launcher, and the cancels at its end must fit in the jobmanager's
/// stop grace (10 s).
constexpr auto quick_deadline = 5s;

struct slurm_launcher_state {
  resource_manager_actor rm;
  worker_command cmd;
  /// Shared with the cleanup that cancels the jobs (which runs after the
  /// state is gone).
  std::shared_ptr<slurm_workers> jobs;
  /// Jobs (ids or "--name=NAME") whose scancel failed or whose submission
  /// is in doubt: cancelled again on every poll and at the end. Shared with
  /// the cleanup too.
  std::shared_ptr<std::vector<std::string>> to_cancel
    = std::make_shared<std::vector<std::string>>();
  std::chrono::steady_clock::time_point last_poll;
  /// Why the last squeue failed ("": it did not), so that a failing squeue
  /// is logged once, not on every poll.
  std::string poll_problem;
  static inline const char* name = "slurm_launcher";
};

using self_ptr = worker_launcher_actor::stateful_pointer<slurm_launcher_state>;

/// `args` after the Slurm command `name` of `opts`.
std::vector<std::string> with_command(const slurm_options& opts,
                                      const char* name,
                                      std::vector<std::string> args) {
  args.insert(args.begin(), opts.command(name));
  return args;
}

/// scancel for `jobs` (ids, or "--name=NAME"; nothing when empty); logs a
/// failure. Whether it succeeded.
bool cancel_jobs(const slurm_options& opts,
                 const std::vector<std::string>& jobs) {
  if (jobs.empty())
    return true;
  bool ok = true;
  std::vector<std::string> ids;
  for (auto& j : jobs) {
    if (j.rfind("--name=", 0) == 0) {
      // One name per scancel: it takes no list of names.
      auto r = os::run_command(with_command(opts, "scancel", {j}), quick_deadline);
      if (!r.ok()) {
        log_eventf("scancel {}: {}", j, r.problem());
        ok = false;
      }
    } else {
      ids.push_back(j);
    }
  }
  if (ids.empty())
    return ok;
  auto r = os::run_command(with_command(opts, "scancel", ids), quick_deadline);
  if (!r.ok())
    log_eventf("scancel {}: {}", fmt::join(ids, " "), r.problem());
  return ok && r.ok();
}

worker_launcher_actor::behavior_type
slurm_launcher_impl(self_ptr self, resource_manager_actor rm,
                    worker_command cmd, slurm_options opts) {
  auto& st = self->state;
  st.rm = std::move(rm);
  st.jobs = std::make_shared<slurm_workers>(std::move(opts), cmd.cluster_name);
  st.cmd = std::move(cmd);
  // However the launcher ends (its ResourceManager ended, the jobmanager
  // stops, with or without an error), no worker job stays behind.
  self->attach_functor([jobs = st.jobs, doubtful = st.to_cancel] {
    auto ids = jobs->job_ids();
    ids.insert(ids.end(), doubtful->begin(), doubtful->end());
    if (!ids.empty())
      log_eventf("cancelling Slurm job(s) {}", fmt::join(ids, " "));
    cancel_jobs(jobs->options(), ids);
  });
  return {
    [=](start_atom, const resource_id& id, int32_t slots,
        const resource_profile& slot) {
      auto& st = self->state;
      worker_request w{st.cmd.jobmanager, id, slots, slot};
      std::vector<std::string> argv{st.cmd.program};
      auto args = st.cmd.arguments(w);
      argv.insert(argv.end(), args.begin(), args.end());
      auto& opts = st.jobs->options();
      auto sbatch = with_command(
        opts, "sbatch", st.jobs->sbatch_arguments(w, st.cmd.log_dir, argv));
      auto r = os::run_command(sbatch, command_deadline);
      auto job = r.ok() ? st.jobs->submitted(id, r.out) : std::string{};
      if (job.empty()) {
        auto why = fmt::format("{}: {}", sbatch[0],
                               r.ok() ? fmt::format("no job id in its output "
                                                    "'{}'",
                                                    r.out)
                                      : r.problem());
        log_eventf("cannot start worker {}: {}", id.value, why);
        // Slurm may have taken the job all the same (sbatch killed at its
        // deadline): its unique name finds it.
        auto name = "--name=" + st.jobs->job_name(id);
        if (!cancel_jobs(opts, {name}))
          st.to_cancel->push_back(name);
        self->send(st.rm, exited_atom_v, id, why);
        return;
      }
      log_eventf("started worker {} (Slurm job {}): {}", id.value, job,
                 fmt::join(sbatch, " "));
    },
    [=](cancel_atom, const resource_id& id) {
      auto& st = self->state;
      auto job = st.jobs->forget(id);
      if (job.empty())
        return;
      log_eventf("cancelling worker {} (Slurm job {})", id.value, job);
      if (!cancel_jobs(st.jobs->options(), {job}))
        st.to_cancel->push_back(job); // again on the next poll
      self->send(st.rm, exited_atom_v, id, std::string{});
    },
    [=](tick_atom) {
      auto& st = self->state;
      auto now = std::chrono::steady_clock::now();
      if (now - st.last_poll < st.jobs->options().poll_interval)
        return; // the ResourceManager ticks more often than squeue is asked
      if (!st.to_cancel->empty()
          && cancel_jobs(st.jobs->options(), *st.to_cancel))
        st.to_cancel->clear();
      auto args = st.jobs->squeue_arguments();
      if (args.empty()) {
        st.last_poll = std::chrono::steady_clock::now();
        return;
      }
      // SQUEUE_PARTITION and friends would filter weir's jobs out.
      auto r = os::run_command(with_command(st.jobs->options(), "squeue", args),
                           quick_deadline, {"SQUEUE_"});
      // From its end: ticks queued behind a slow squeue do not each run
      // another one.
      st.last_poll = std::chrono::steady_clock::now();
      if (!r.ok()) {
        // Unknown is not ended: the jobs are asked about again next time.
        if (auto problem = r.problem(); problem != st.poll_problem)
          log_eventf("squeue: {}", problem);
        st.poll_problem = r.problem();
        return;
      }
      st.poll_problem.clear();
      for (auto& e : st.jobs->ended(r.out)) {
        log_eventf("worker {} (Slurm job {}) ended: {}", e.worker.value,
                   e.job_id, e.state);
        // A job squeue cannot see (or one revoked here in a federation)
        // may live on elsewhere: it is cancelled to be sure.
        if (e.state == "VANISHED" || e.state == "REVOKED")
          st.to_cancel->push_back(e.job_id);
        self->send(st.rm, exited_atom_v, e.worker, std::string{});
      }
    },
  };
}

} // namespace

worker_launcher_actor spawn_slurm_launcher(caf::actor_system& sys,
                                           resource_manager_actor rm,
                                           worker_command cmd,
                                           slurm_options opts) {
  return sys.spawn<caf::detached>(slurm_launcher_impl, std::move(rm),
                                  std::move(cmd), std::move(opts));
}

} // namespace weir
