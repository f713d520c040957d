#include "actors/resource_manager/slurm_batch.hpp"

#include <cmath>
#include <set>

#include <unistd.h>

#include <fmt/format.h>

#include "config/keys.hpp"
#include "os/spawn.hpp"

namespace weir {

namespace {

/// Whether `path` is a file this process may execute.
bool executable(const std::string& path) {
  return ::access(path.c_str(), X_OK) == 0;
}

/// `s` without spaces, tabs, CR and LF around it.
std::string_view trimmed(std::string_view s) {
  auto first = s.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos)
    return {};
  auto last = s.find_last_not_of(" \t\r\n");
  return s.substr(first, last - first + 1);
}

} // namespace

std::string slurm_options::command(std::string_view name) const {
  if (bin_dir.empty())
    return std::string{name};
  return fmt::format("{}/{}", bin_dir, name);
}

std::string slurm_options::missing_commands() const {
  // Arguments that would make the launcher lose track of its jobs (their
  // names, ids and cluster are how it finds them again).
  for (auto& arg : extra_args)
    for (std::string_view bad : {"-J", "--job-name", "-M", "--clusters",
                                 "-a", "--array", "--wrap", "--parsable"})
      if (arg.rfind(bad, 0) == 0
          && (arg.size() == bad.size() || arg[bad.size()] == '='
              || bad.size() == 2))
        return fmt::format("{}: '{}' would hide weir's worker jobs from it "
                           "(it names, finds and cancels them itself)",
                           keys::slurm_sbatch_args.name, arg);
  for (std::string_view name : {"sbatch", "squeue", "scancel"}) {
    if (bin_dir.empty() ? !os::find_on_path(std::string{name}).empty()
                        : executable(command(name)))
      continue;
    if (bin_dir.empty())
      return fmt::format("{}: slurm: no '{}' on PATH (set {} to the "
                         "directory of the Slurm commands)",
                         keys::resourcemanager_backend.name, name,
                         keys::slurm_bin_dir.name);
    return fmt::format("{}: no executable '{}' in '{}'",
                       keys::slurm_bin_dir.name, name, bin_dir);
  }
  return {};
}

std::vector<std::string> split_words(std::string_view text) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < text.size()) {
    auto start = text.find_first_not_of(" \t", i);
    if (start == std::string_view::npos)
      break;
    auto end = text.find_first_of(" \t", start);
    if (end == std::string_view::npos)
      end = text.size();
    words.emplace_back(text.substr(start, end - start));
    i = end;
  }
  return words;
}

std::string shell_command(const std::vector<std::string>& argv) {
  std::string out;
  for (auto& word : argv) {
    if (!out.empty())
      out += ' ';
    out += '\'';
    for (char c : word) {
      if (c == '\'')
        out += "'\\''"; // end the quote, an escaped quote, quote again
      else
        out += c;
    }
    out += '\'';
  }
  return out;
}

slurm_workers::slurm_workers(slurm_options opts, std::string cluster)
  : opts_(std::move(opts)), cluster_(std::move(cluster)) {
  // nothing else
}

std::string slurm_workers::job_name(const resource_id& id) const {
  return fmt::format("{}.{}", cluster_, id.value);
}

int64_t slurm_workers::cpus(const worker_request& w) const {
  if (w.slot.cpu_cores > 0)
    return std::max<int64_t>(
      1, static_cast<int64_t>(std::ceil(w.slot.cpu_cores * w.slots - 1e-9)));
  return opts_.cpus_per_slot * w.slots;
}

int64_t slurm_workers::memory_mb(const worker_request& w) const {
  // memory-per-slot is also the least a slot gets: a profile names the
  // worker's heap, direct and native memory, not the process around them
  // (network buffers, code), which cgroup enforcement counts too.
  auto per_slot = w.slot.heap_mb + w.slot.direct_mb + w.slot.native_mb;
  return std::max(per_slot, opts_.memory_per_slot_mb) * w.slots;
}

std::vector<std::string>
slurm_workers::sbatch_arguments(const worker_request& w,
                                const std::string& log_dir,
                                const std::vector<std::string>& argv) const {
  auto name = job_name(w.id);
  std::vector<std::string> args{
    "--parsable",
    "--job-name=" + name,
    // %j: a replacement job of the same worker never overwrites the output.
    fmt::format("--output={}/{}.slurm-%j.out", log_dir, w.id.value),
    "--nodes=1",
    "--ntasks=1",
    fmt::format("--cpus-per-task={}", cpus(w)),
    fmt::format("--mem={}M", memory_mb(w)),
    // A preempted or failed worker is replaced by the ResourceManager with
    // a new job when its slots are still needed; a requeued one would come
    // back as a stranger.
    "--no-requeue",
  };
  if (!opts_.partition.empty())
    args.push_back("--partition=" + opts_.partition);
  if (!opts_.account.empty())
    args.push_back("--account=" + opts_.account);
  if (opts_.time_limit.count() > 0) {
    auto minutes = (opts_.time_limit.count() + 59999) / 60000;
    args.push_back(fmt::format("--time={}", minutes));
  }
  args.insert(args.end(), opts_.extra_args.begin(), opts_.extra_args.end());
  // The job script: `exec` so that Slurm's signals reach the worker itself.
  args.push_back("--wrap=exec " + shell_command(argv));
  return args;
}

std::string slurm_workers::submitted(const resource_id& id,
                                     const std::string& output) {
  // --parsable prints "JOBID" or "JOBID;CLUSTER" on its last line.
  auto text = trimmed(output);
  auto line_start = text.find_last_of('\n');
  auto line = trimmed(line_start == std::string_view::npos
                        ? text
                        : text.substr(line_start + 1));
  auto job = line.substr(0, line.find(';'));
  if (job.empty()
      || job.find_first_not_of("0123456789") != std::string_view::npos)
    return {};
  jobs_[id] = std::string{job};
  return jobs_[id];
}

std::vector<std::string> slurm_workers::squeue_arguments() const {
  if (jobs_.empty())
    return {};
  // By name, not --jobs: squeue refuses a job id it has already purged.
  std::string names;
  for (auto& [id, job] : jobs_) {
    if (!names.empty())
      names += ',';
    names += job_name(id);
  }
  // --all: jobs in hidden partitions too.
  return {"--noheader", "--all", "--states=all", "--format=%i|%T",
          "--name=" + names};
}

std::vector<ended_slurm_job>
slurm_workers::ended(const std::string& squeue_output) {
  std::map<std::string, std::string> state_of;
  std::string_view rest = squeue_output;
  while (!rest.empty()) {
    auto nl = rest.find('\n');
    auto line = trimmed(rest.substr(0, nl));
    rest = nl == std::string_view::npos ? std::string_view{}
                                        : rest.substr(nl + 1);
    auto bar = line.find('|');
    if (bar == std::string_view::npos)
      continue;
    state_of[std::string{trimmed(line.substr(0, bar))}]
      = std::string{trimmed(line.substr(bar + 1))};
  }
  std::vector<ended_slurm_job> out;
  for (auto i = jobs_.begin(); i != jobs_.end();) {
    auto s = state_of.find(i->second);
    if (s == state_of.end() || has_ended(s->second)) {
      out.push_back({i->first, i->second,
                     s == state_of.end() ? "VANISHED" : s->second});
      i = jobs_.erase(i);
    } else {
      ++i;
    }
  }
  return out;
}

std::string slurm_workers::forget(const resource_id& id) {
  auto i = jobs_.find(id);
  if (i == jobs_.end())
    return {};
  auto job = i->second;
  jobs_.erase(i);
  return job;
}

std::string slurm_workers::job_of(const resource_id& id) const {
  auto i = jobs_.find(id);
  return i == jobs_.end() ? std::string{} : i->second;
}

std::vector<std::string> slurm_workers::job_ids() const {
  std::vector<std::string> ids;
  for (auto& [id, job] : jobs_)
    ids.push_back(job);
  return ids;
}

bool slurm_workers::has_ended(std::string_view state) {
  // squeue's %T names (Slurm 22.05); any other state (PENDING, RUNNING,
  // CONFIGURING, SUSPENDED, REQUEUED, RESIZING, SIGNALING, STAGE_OUT, ...)
  // is a job that still exists.
  static const std::set<std::string_view> ended{
    "BOOT_FAIL", "CANCELLED", "COMPLETED",     "COMPLETING", "DEADLINE",
    "FAILED",    "NODE_FAIL", "OUT_OF_MEMORY", "PREEMPTED",  "REVOKED",
    "SPECIAL_EXIT", "TIMEOUT"};
  return ended.count(state) > 0;
}

} // namespace weir
