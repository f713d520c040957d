#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "actors/resource_manager/worker_launcher.hpp"

namespace weir {

/// The Slurm backend's settings (resourcemanager.slurm.*, read by
/// process/options.cpp).
struct slurm_options {
  /// sbatch --partition and --account ("": Slurm's defaults).
  std::string partition;
  std::string account;
  /// sbatch --time, rounded up to minutes (0: the partition's default).
  std::chrono::milliseconds time_limit{0};
  /// CPUs per slot when a worker's slot profile names none; memory (MB)
  /// per slot then, and the least a slot gets.
  int64_t cpus_per_slot = 1;
  int64_t memory_per_slot_mb = 1024;
  /// More sbatch arguments, after weir's own (so they win).
  std::vector<std::string> extra_args;
  /// Where sbatch, squeue and scancel are ("": on PATH).
  std::string bin_dir;
  /// How often squeue is asked about the jobs.
  std::chrono::milliseconds poll_interval{1000};

  /// The path of Slurm command `name` (bin_dir/name, or name for PATH).
  std::string command(std::string_view name) const;

  /// Why the Slurm commands cannot be run (one line naming the key), or ""
  /// when sbatch, squeue and scancel are executables and the extra sbatch
  /// arguments leave the jobs' names, ids and cluster to weir.
  std::string missing_commands() const;
};

/// `text` split at spaces and tabs (resourcemanager.slurm.sbatch-args).
std::vector<std::string> split_words(std::string_view text);

/// `argv` as one POSIX shell command line, every word single-quoted.
std::string shell_command(const std::vector<std::string>& argv);

/// A Slurm job that ended, as squeue told it.
struct ended_slurm_job {
  resource_id worker;
  std::string job_id;
  /// Its last state (COMPLETED, CANCELLED, FAILED, TIMEOUT, PREEMPTED,
  /// NODE_FAIL, ...), or "VANISHED" when squeue no longer knows it.
  std::string state;
};

/// The Slurm backend's bookkeeping (plain class; the launcher actor runs
/// the commands): which worker is which Slurm job, the arguments of
/// sbatch, squeue and scancel, and what their output means. Each worker is
/// one batch job of one task that execs `weir taskmanager`.
class slurm_workers {
public:
  /// `cluster` names the application cluster in the job names.
  slurm_workers(slurm_options opts, std::string cluster);

  const slurm_options& options() const { return opts_; }

  /// The job name of worker `id`: "CLUSTER.ID" (squeue selects by it).
  std::string job_name(const resource_id& id) const;

  /// CPUs of worker `w`'s job: its slots times the profile's cores (rounded
  /// up), or times cpus_per_slot when the profile names none.
  int64_t cpus(const worker_request& w) const;

  /// Memory (MB) of worker `w`'s job: its slots times the profile's heap +
  /// direct + native memory, at least memory_per_slot_mb each.
  int64_t memory_mb(const worker_request& w) const;

  /// sbatch's arguments (not the program) to run `argv` (a program and its
  /// arguments) as worker `w`, its output in `log_dir`.
  std::vector<std::string>
  sbatch_arguments(const worker_request& w, const std::string& log_dir,
                   const std::vector<std::string>& argv) const;

  /// Records the job id that `sbatch --parsable` printed for worker `id`
  /// and returns it; "" when the output holds none.
  std::string submitted(const resource_id& id, const std::string& output);

  /// squeue's arguments (not the program) that list every tracked job's id
  /// and state, ended ones included; empty when none is tracked.
  std::vector<std::string> squeue_arguments() const;

  /// The tracked jobs that ended according to squeue's output (lines
  /// "ID|STATE"); they are no longer tracked.
  std::vector<ended_slurm_job> ended(const std::string& squeue_output);

  /// Stops tracking worker `id`; its job id, "" when it is not tracked.
  std::string forget(const resource_id& id);

  /// The job id of worker `id`, "" when it is not tracked.
  std::string job_of(const resource_id& id) const;

  /// Every tracked job id.
  std::vector<std::string> job_ids() const;

  /// Whether a job in this squeue state (%T) has ended: its worker process
  /// is gone or going (COMPLETING included).
  static bool has_ended(std::string_view state);

private:
  slurm_options opts_;
  std::string cluster_;
  std::map<resource_id, std::string> jobs_; // worker -> Slurm job id
};

} // namespace weir
