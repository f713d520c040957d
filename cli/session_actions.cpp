// `weir list` and `weir cancel` against a session cluster.
#include <ctime>

#include <cxxopts.hpp>
#include <fmt/format.h>

#include "cli/action_flags.hpp"
#include "cli/actions.hpp"
#include "cli/config_flags.hpp"
#include "process/exit_codes.hpp"
#include "cli/remote.hpp"
#include "cli/task_load_lines.hpp"
#include "messages/errors.hpp"

namespace weir::cli {

namespace {

using namespace std::chrono_literals;

/// Flink's time of a job line: dd.MM.yyyy HH:mm:ss, local time.
std::string local_time(int64_t ms) {
  auto secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  localtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%d.%m.%Y %H:%M:%S", &tm);
  return buf;
}

/// ", waiting for 2 of 4 slots since 12 s" while the job lacks slots (say,
/// after a lost TaskExecutor); "" otherwise.
std::string describe_waiting(const job_status& s, int64_t now) {
  if (s.slots_missing <= 0)
    return {};
  return fmt::format(", waiting for {} of {} slots since {} s",
                     s.slots_missing, s.slots_needed,
                     std::max<int64_t>(now - s.waiting_since_ms, 0) / 1000);
}

/// Flink's line of a job ("TIME : ID : NAME (STATE)", so that scripts
/// matching "(RUNNING)" work), then weir's: how long it ran, and what it
/// waits for.
std::string describe_job(const job_status& s) {
  auto now = now_ms();
  auto end = s.end_time_ms > 0 ? s.end_time_ms : now;
  return fmt::format("{} : {} : {} ({}) {:.1f} s{}", local_time(s.start_time_ms),
                     s.id.to_string(), s.name, to_string(s.state),
                     static_cast<double>(end - s.start_time_ms) / 1000.0,
                     describe_waiting(s, now));
}

/// Whether the job failed or is failing: its cause is shown with it.
bool shows_cause(const job_status& s) {
  return (s.state == job_state::failed || s.state == job_state::failing)
         && !s.error.empty();
}

void print_section(const char* title, const std::vector<job_status>& jobs,
                   const char* none) {
  if (jobs.empty()) {
    fmt::print("{}\n", none);
    return;
  }
  fmt::print("{:-^62}\n", fmt::format(" {} ", title));
  for (auto& j : jobs)
    if (shows_cause(j))
      fmt::print("{} cause: {}\n", describe_job(j), j.error);
    else
      fmt::print("{}\n", describe_job(j));
  fmt::print("{:-^62}\n", "");
}

/// The job's record counters: every attempt's (they never go down), and
/// the current attempt's once the job has restarted.
std::string describe_records(const job_status& s) {
  auto line = fmt::format("Records: {} in, {} out", s.metrics.records_in,
                          s.metrics.records_out);
  if (s.metrics.records_skipped > 0)
    line += fmt::format(", {} skipped (the first: {})",
                        s.metrics.records_skipped, s.metrics.skipped_note);
  if (s.restarts <= 0)
    return line;
  return fmt::format("{} (all attempts; the current one, after {} restart{}: "
                     "{} in, {} out)",
                     line, s.restarts, s.restarts == 1 ? "" : "s",
                     s.attempt_metrics.records_in,
                     s.attempt_metrics.records_out);
}

/// What a cancel did, as `weir cancel` says it.
std::string describe_cancel(const std::string& job, const cancel_outcome& o) {
  if (is_globally_terminal(o.before))
    return fmt::format("Job {} had already ended ({}); nothing to cancel.",
                       job, to_string(o.before));
  if (o.before == job_state::cancelling)
    return fmt::format("Job {} is being cancelled already ({}).", job,
                       to_string(o.after));
  if (o.after == job_state::canceled)
    return fmt::format("Cancelled job {}: it is CANCELED.", job);
  if (o.after == job_state::cancelling)
    return fmt::format("Cancelled job {}: it is CANCELLING until its "
                       "subtasks have stopped.",
                       job);
  return fmt::format("Job {} cannot be cancelled: it is {}.", job,
                     to_string(o.after));
}

} // namespace

cxxopts::Options list_flags() {
  cxxopts::Options opts("weir list", "List the jobs of a session cluster.");
  opts.custom_help("[-m HOST:PORT] [-r|-s|-a]");
  opts.add_options()
    ("m,jobmanager", "HOST:PORT of the jobmanager's REST API (rest.port), "
     "or etcd://HOST:PORT of an etcd that names the leader (default "
     "rest.address or jobmanager.rpc.address, and rest.port)",
     cxxopts::value<std::string>())
    ("r,running", "only running jobs")
    ("s,scheduled", "only scheduled jobs")
    ("a,all", "all jobs, terminated ones included")
    ("h,help", "print this help");
  add_config_flags(opts);
  return opts;
}

int list_action(const std::vector<std::string>& args) {
  auto opts = list_flags();
  cxxopts::ParseResult res;
  if (auto code = parse_flags(opts, "weir list", args, res); code >= 0)
    return code;
  remote_cluster remote;
  if (auto code = remote.connect("weir list", res); code >= 0)
    return code;
  auto listed = remote.jobs().list();
  if (!listed) {
    fmt::print(stderr, "weir list: {}\n", describe(listed.error()));
    return exit_cluster_error;
  }
  auto& jobs = *listed;
  std::sort(jobs.begin(), jobs.end(), [](auto& a, auto& b) {
    return a.start_time_ms < b.start_time_ms;
  });
  std::vector<job_status> running, scheduled, terminated;
  for (auto& j : jobs) {
    if (is_globally_terminal(j.state))
      terminated.push_back(j);
    else if (j.state == job_state::created)
      scheduled.push_back(j);
    else
      running.push_back(j);
  }
  bool only_r = res.count("running") > 0;
  bool only_s = res.count("scheduled") > 0;
  bool all = res.count("all") > 0;
  if (!only_s)
    print_section("Running/Restarting Jobs", running,
                  "No running jobs.");
  if (!only_r)
    print_section("Scheduled Jobs", scheduled, "No scheduled jobs.");
  if (all)
    print_section("Terminated Jobs", terminated, "No terminated jobs.");
  return exit_ok;
}

cxxopts::Options cancel_flags() {
  return job_action_flags("weir cancel", "Cancel a job of a session cluster.");
}

int cancel_action(const std::vector<std::string>& args) {
  remote_cluster remote;
  int code = exit_ok;
  cxxopts::ParseResult res;
  auto opts = cancel_flags();
  auto id = connect_for_job("weir cancel", opts, args, remote, code, res);
  if (!id)
    return code;
  auto outcome = remote.jobs().cancel(*id);
  if (!outcome) {
    fmt::print(stderr, "{}\n",
               job_error_line("weir cancel", outcome.error(), *id,
                              remote.address()));
    return exit_code_for_job_error(outcome.error());
  }
  fmt::print("{}\n", describe_cancel(id->to_string(), *outcome));
  return exit_ok;
}

} // namespace weir::cli

namespace weir::cli {

namespace {

/// What `weir status` prints of a job.
void print_status(const job_status& s) {
  fmt::print("Job {}\n", describe_job(s));
  if (shows_cause(s))
    fmt::print("Cause: {}\n", s.error);
  if (s.slots_missing > 0 && !s.waiting_for.empty())
    fmt::print("Waiting for slots: {}\n", s.waiting_for);
  fmt::print("{}\n", describe_records(s));
  for (auto& v : s.metrics.vertices) {
    fmt::print("Vertex {}: {} in, {} out", v.vertex, v.records_in,
               v.records_out);
    if (v.records_combined > 0)
      fmt::print(" (combined from {} emitted)", v.records_combined);
    fmt::print("\n");
  }
  for (auto& line : counter_lines(s.metrics))
    fmt::print("{}\n", line);
  if (!(s.slot_profile == resource_profile{}))
    fmt::print("Slot profile: {}\n", to_string(s.slot_profile));
  if (s.subtasks.empty())
    return;
  size_t width = 4;
  for (auto& x : s.subtasks)
    width = std::max(width, x.task.size());
  fmt::print("Subtasks:\n");
  for (auto& x : s.subtasks)
    fmt::print("  {:<{}}  {:>5}  {:<12}  {}\n", x.task, width,
               fmt::format("{}/{}", x.subtask + 1, x.parallelism),
               to_string(x.state),
               x.location.empty() ? "-" : x.location);
  fmt::print("Load (records per second; busy and backpressured: the "
             "highest of a subtask, ms per second):\n");
  for (auto& line : task_load_lines(s.subtasks))
    fmt::print("{}\n", line);
  auto marks = watermark_lines(s.subtasks);
  if (!marks.empty())
    fmt::print("Watermarks (event time, UTC; the least of a task's "
               "subtasks):\n");
  for (auto& line : marks)
    fmt::print("{}\n", line);
}

} // namespace

cxxopts::Options status_flags() {
  return job_action_flags("weir status",
                          "Show a job of a session cluster: its state, "
                          "counters and where each subtask runs.");
}

int status_action(const std::vector<std::string>& args) {
  remote_cluster remote;
  int code = exit_ok;
  cxxopts::ParseResult res;
  auto opts = status_flags();
  auto id = connect_for_job("weir status", opts, args, remote, code, res);
  if (!id)
    return code;
  auto status = remote.jobs().status(*id, true);
  if (!status) {
    fmt::print(stderr, "{}\n",
               job_error_line("weir status", status.error(), *id,
                              remote.address()));
    return exit_code_for_job_error(status.error());
  }
  print_status(*status);
  return exit_ok;
}

} // namespace weir::cli

namespace weir::cli {

cxxopts::Options wait_flags() {
  return job_action_flags("weir wait",
                          "Wait for a job of a session cluster to end and "
                          "print its result, as an attached `weir run` "
                          "would.");
}

int wait_action(const std::vector<std::string>& args) {
  remote_cluster remote;
  int code = exit_ok;
  cxxopts::ParseResult res;
  auto opts = wait_flags();
  auto id = connect_for_job("weir wait", opts, args, remote, code, res);
  if (!id)
    return code;
  // An unknown job is an error now rather than a wait forever.
  if (auto known = remote.jobs().status(*id, false); !known) {
    fmt::print(stderr, "{}\n", job_error_line("weir wait", known.error(), *id,
                                     remote.address()));
    return exit_code_for_job_error(known.error());
  }
  return wait_for_job(remote.jobs(), *id, "weir wait", false,
                      remote.address());
}

} // namespace weir::cli
