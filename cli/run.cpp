#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/scoped_actor.hpp>

#include <cxxopts.hpp>
#include <fmt/format.h>

#include "cli/action_flags.hpp"
#include "cli/actions.hpp"
#include "cli/config_flags.hpp"
#include "cli/driver_flags.hpp"
#include "process/exit_codes.hpp"
#include "cli/flag_table.hpp"
#include "cli/job_command.hpp"
#include "cli/job_keys.hpp"
#include "messages/record.hpp"
#include "cli/local_recovery.hpp"
#include "cli/log_flag.hpp"
#include "cli/remote.hpp"
#include "cli/user_code.hpp"
#include "client/dispatcher_jobs.hpp"
#include "cluster/mini_cluster.hpp"
#include "cluster/runtime_config.hpp"
#include "cluster/stop_signal.hpp"
#include "config/keys.hpp"
#include "messages/errors.hpp"
#include "operators/registry.hpp"
#include "plan/savepoint_fit.hpp"

namespace weir::cli {

namespace {

using namespace std::chrono_literals;

/// The first Ctrl-C cancels the job (sinks remove their in-progress files);
/// a second one ends the process at once.
void cancel_on_interrupt() {
  catch_stop_signals(second_signal::ends_process);
}

/// How often the client asks for the job's status.
constexpr auto progress_interval = 200ms;

struct run_settings {
  std::optional<int32_t> parallelism;
  std::string jobmanager; ///< -m: a session cluster instead of a local one
  bool detached = false;
};

} // namespace

cxxopts::Options run_flags() {
  cxxopts::Options opts("weir run",
                        "Run a job on an embedded local cluster (Dispatcher, "
                        "ResourceManager and TaskExecutors in this process), "
                        "or with -m on a session cluster. weir's flags go "
                        "anywhere after 'run'; --PARAM VALUE after the spec "
                        "sets the spec's parameter PARAM. Driver mode "
                        "(-D, its flags below) runs a driver program instead.");
  opts.custom_help("SPEC [OPTIONS] [--PARAM VALUE ...]");
  opts.add_options()
    ("p,parallelism", "parallelism of the vertices that set none "
     "(parallelism.default; default: the spec's)", cxxopts::value<int32_t>())
    ("taskmanagers", "number of TaskExecutors of the local cluster "
     "(minicluster.number-of-taskmanagers; default 1)",
     cxxopts::value<int32_t>())
    ("slots", "slots per TaskExecutor (taskmanager.numberOfTaskSlots; "
     "default: enough for the job's highest parallelism)",
     cxxopts::value<int32_t>())
    ("state-dir", "high-availability.storageDir: keep jobs in RocksDB here "
     "and recover unfinished ones (default: in memory)",
     cxxopts::value<std::string>())
    ("m,jobmanager", "HOST:PORT of the REST API (rest.port) of a session "
     "cluster's jobmanager to run the job on (default: an embedded local "
     "cluster)",
     cxxopts::value<std::string>())
    ("d,detached", "with -m: print the job id and return once the job is "
     "submitted")
    ("jobid", "the job's id (32 hex characters); submitting the same job "
     "with the same id again attaches to it instead of running it twice",
     cxxopts::value<std::string>())
    ("s,fromSavepoint", "start the job from this savepoint (its operators' "
     "state, matched by vertex id)", cxxopts::value<std::string>())
    ("n,allowNonRestoredState", "with -s: skip savepoint state of vertices "
     "the job does not have instead of refusing to start")
    ("r,resume", "start the job from the newest retained checkpoint under "
     "this directory (execution.checkpointing.dir or a job's part of it)",
     cxxopts::value<std::string>())
    ("log", "append the embedded cluster's event log to this file (off by "
     "default)", cxxopts::value<std::string>())
    ("h,help", "print this help");
  add_user_code_flags(opts);
  add_config_flags(opts);
  return opts;
}

namespace {

void print_progress(const job_status& s) {
  fmt::print(stderr,
             "\r\x1b[K[{}] subtasks: {} running, {} finished of {} | records "
             "in {}, out {}",
             to_string(s.state), s.subtasks_running, s.subtasks_finished,
             s.subtasks_total, s.metrics.records_in, s.metrics.records_out);
  std::fflush(stderr);
}

/// Prints the restarts of `s` after the first `shown`, one line each: a
/// job that keeps failing says why while it retries.
void print_restarts(const job_status& s, const std::string& action, bool tty,
                    int32_t& shown) {
  for (auto& f : s.exceptions) {
    if (f.restart <= shown)
      continue;
    shown = f.restart;
    auto where = f.task.empty() ? std::string{}
                 : f.location.empty()
                   ? fmt::format(" of {}", f.task)
                   : fmt::format(" of {} on {}", f.task, f.location);
    fmt::print(stderr, "{}{}: restart {} in {} ms after a failure{}: {}\n",
               tty ? "\r\x1b[K" : "", action, f.restart, f.restart_delay_ms,
               where, f.exception);
  }
}

/// Prints why the job waits for slots when that changed since `shown`: a
/// client must not wait in silence.
void print_waiting(const job_status& s, const std::string& action, bool tty,
                   std::string& shown) {
  auto now = s.slots_missing > 0 && !s.waiting_for.empty()
               ? fmt::format("waiting for {} of {} slots: {}", s.slots_missing,
                             s.slots_needed, s.waiting_for)
               : std::string{};
  if (now == shown)
    return;
  shown = now;
  if (!now.empty())
    fmt::print(stderr, "{}{}: {}\n", tty ? "\r\x1b[K" : "", action, now);
}

/// Prints the rows of `tables` from the `skip`-th on, one line each: the
/// fields' text forms separated by tabs (`key<TAB>value` for the keyed
/// default schemas, as the text sinks write them).
void print_rows(const std::vector<collected_table>& tables, size_t skip = 0) {
  std::string out;
  for (auto& t : tables) {
    if (skip >= t.rows.rows) {
      skip -= t.rows.rows;
      continue;
    }
    for (auto i = skip; i < t.rows.rows; ++i) {
      append_row_text(out, t.rows, i);
      if (out.size() > (1 << 16)) {
        std::fwrite(out.data(), 1, out.size(), stdout);
        out.clear();
      }
    }
    skip = 0;
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  std::fflush(stdout);
}

/// A failed job's exit code: the status its driver returned, if it is one
/// (1..255, driver mode's promise), else 1.
int driver_exit_code(const job_result& r) {
  if (r.exit_status == 0)
    return exit_job_failed;
  if (r.exit_status < 1 || r.exit_status > 255) {
    fmt::print(stderr, "weir: the driver returned {}, which is not an exit "
                       "status (1..255): exiting with {}\n",
               r.exit_status, exit_job_failed);
    return exit_job_failed;
  }
  return r.exit_status;
}

/// Prints the result; `printed` records were printed while it ran.
int report_result(const job_result& r, size_t printed = 0) {
  print_rows(r.collected, printed);
  if (r.state == job_state::finished)
    fmt::print(stderr, "Job with JobID {} has finished.\n", r.id.to_string());
  else
    fmt::print(stderr, "Job with JobID {} ended {}: {}\n", r.id.to_string(),
               to_string(r.state), r.error);
  fmt::print(stderr, "Job Runtime: {} ms ({} records in, {} records out)\n",
             r.end_time_ms - r.start_time_ms, r.metrics.records_in,
             r.metrics.records_out);
  if (r.metrics.records_skipped > 0)
    fmt::print(stderr, "Skipped: {} record{} ({}{})\n",
               r.metrics.records_skipped,
               r.metrics.records_skipped == 1 ? "" : "s",
               r.metrics.records_skipped == 1 ? "" : "the first: ",
               r.metrics.skipped_note);
  for (auto& line : counter_lines(r.metrics))
    fmt::print(stderr, "{}\n", line);
  if (r.state != job_state::finished)
    return driver_exit_code(r);
  if (!r.error.empty()) {
    // The job finished but its result could not be stored.
    fmt::print(stderr, "weir run: {}\n", r.error);
    return exit_cluster_error;
  }
  return exit_ok;
}

/// Bad input is the client's fault (exit 2); anything else, such as storage
/// or a dispatcher that is gone, is the cluster's (exit 3).
int exit_code_for(const caf::error& err) {
  if (err.category() == errc_category()
      && (err.code() == static_cast<uint8_t>(errc::invalid_job)
          || err.code() == static_cast<uint8_t>(errc::invalid_config)
          || err.code() == static_cast<uint8_t>(errc::duplicate_job)))
    return exit_bad_input;
  return exit_cluster_error;
}

/// Submits the job and waits for its result, printing progress when stderr
/// is a terminal.
int submit_and_wait(client::job_service& jobs, const job_graph& g,
                    const std::string& address = "") {
  auto id = jobs.submit(g);
  if (!id) {
    fmt::print(stderr, "weir run: job rejected: {}\n", describe(id.error()));
    return exit_code_for(id.error());
  }
  fmt::print(stderr, "Job has been submitted with JobID {}\n", id->to_string());
  return wait_for_job(jobs, *id, "weir run", false, address);
}

} // namespace

int wait_for_job(client::job_service& jobs, job_id id,
                 const std::string& action, bool stream,
                 const std::string& address) {
  size_t printed = 0;
  cancel_on_interrupt();
  bool tty = isatty(STDERR_FILENO) != 0;
  std::optional<job_result> result;
  std::optional<caf::error> lost;
  bool master_lost = false;
  bool cancel_sent = false;
  int32_t restarts_shown = 0;
  std::string waiting_shown;
  auto is_lost = [](const caf::error& err) {
    return err == make_error(errc::peer_lost);
  };
  while (!result && !lost) {
    if (stop_requested() && !cancel_sent) {
      cancel_sent = true;
      fmt::print(stderr, "{}{}: interrupted, canceling job {}\n",
                 tty ? "\r\x1b[K" : "", action, id.to_string());
      (void) jobs.cancel(id);
    }
    // The result comes the moment the job ends; meanwhile this loop prints
    // progress and a driver's output once per progress_interval.
    auto r = jobs.await_result(id, progress_interval);
    if (!r) {
      lost = r.error();
      master_lost = is_lost(*lost);
    } else if (*r) {
      result = std::move(**r);
    }
    // Each poll gets a bounded part (collect-sink.batch-size.max): poll
    // again at once while there is more.
    for (bool more = stream; more && !result && !lost;) {
      auto rows = jobs.collect(id, static_cast<int64_t>(printed));
      more = rows && !rows->empty();
      if (!more)
        break;
      if (tty)
        fmt::print(stderr, "\r\x1b[K");
      print_rows(*rows);
      printed += row_count(*rows);
    }
    if (!result && !lost)
      if (auto s = jobs.status(id, false)) {
        print_restarts(*s, action, tty, restarts_shown);
        print_waiting(*s, action, tty, waiting_shown);
        if (tty)
          print_progress(*s);
      }
  }
  if (tty)
    fmt::print(stderr, "\r\x1b[K");
  // Restarts between the last poll and the end (the Dispatcher keeps an
  // ended job's failure history).
  if (result)
    if (auto s = jobs.status(id, false))
      print_restarts(*s, action, false, restarts_shown);
  if (!result && master_lost) {
    fmt::print(stderr,
               "{}: connection to the master lost ({}); a restarted "
               "jobmanager recovers the job: weir wait -m {} {}\n",
               action, describe(*lost),
               address.empty() ? std::string{"HOST:PORT"} : address,
               id.to_string());
    return exit_cluster_error;
  }
  if (!result) {
    fmt::print(stderr, "{}: {}\n", action, describe(*lost));
    return *lost == make_error(errc::unknown_job) ? exit_bad_input
                                                  : exit_cluster_error;
  }
  return report_result(*result, printed);
}

namespace {

/// Submits to a session cluster (its user code first); waits unless
/// detached.
int run_remote(const run_settings& flags, const configuration& cfg,
               const job_graph& graph, const prepared_code& user) {
  cancel_on_interrupt();
  remote_cluster remote;
  if (auto code = remote.connect("weir run", flags.jobmanager, cfg);
      code >= 0)
    return code;
  if (!upload_blobs(remote.jobs(), user, "run"))
    return exit_cluster_error;
  if (!flags.detached)
    return submit_and_wait(remote.jobs(), graph, remote.address());
  auto id = remote.jobs().submit(graph);
  if (!id) {
    fmt::print(stderr, "weir run: job rejected: {}\n", describe(id.error()));
    return exit_code_for(id.error());
  }
  fmt::print(stderr, "Job has been submitted with JobID {}\n",
             id->to_string());
  fmt::print("{}\n", id->to_string());
  return exit_ok;
}

/// "taskmanager.numberOfTaskSlots 4 (weir.yaml:3)": a key's value and
/// where it came from.
template <class T>
std::string key_with_origin(const configuration& cfg, const config_key<T>& key,
                            int64_t value, const char* unset) {
  auto origin = cfg.origin(key);
  return fmt::format("{} {} ({})", key.name, value,
                     origin.empty() ? unset : origin);
}

} // namespace

int run_action(const std::vector<std::string>& args) {
  flag_table both_modes{run_flags()};
  both_modes.add(driver_run_flags());
  if (wants_driver_mode(args, both_modes.value_flags()))
    return driver_run_action(args);
  auto opts = run_flags();
  int code = exit_ok;
  auto cmd = parse_job_command("run", opts, args, code,
                               "\n" + help_text(driver_run_flags()));
  if (!cmd)
    return code;
  auto& res = cmd->flags;
  auto cfg = load_config("weir run", res);
  if (!cfg)
    return exit_bad_input;
  run_settings flags;
  if (!default_parallelism("weir run", *cfg, *cmd, flags.parallelism))
    return exit_bad_input;
  // Flags win over configuration keys, which win over the defaults.
  if (report_first(
        "weir run",
        {flag_overrides<int32_t>(*cfg, res, "taskmanagers",
                                 keys::minicluster_task_managers),
         flag_overrides<int32_t>(*cfg, res, "slots", keys::task_slots),
         flag_overrides<std::string>(*cfg, res, "state-dir",
                                     keys::storage_dir)}))
    return exit_bad_input;
  auto mc = mini_cluster_options::from(*cfg);
  if (res.count("jobmanager") > 0)
    flags.jobmanager = res["jobmanager"].as<std::string>();
  flags.detached = res.count("detached") > 0;
  if (flags.detached && flags.jobmanager.empty()) {
    fmt::print(stderr, "weir run: -d needs -m HOST:PORT (a local cluster ends "
                       "with the command)\n");
    return exit_bad_input;
  }
  std::optional<int32_t> slots;
  if (cfg->is_set(keys::task_slots))
    slots = mc.slots_per_task_executor;
  auto user = prepare_user_code("run", res);
  if (!user)
    return exit_bad_input;
  job_graph graph;
  if (auto err = load_job(cmd->args, flags.parallelism, graph,
                          user->operators)) {
    fmt::print(stderr, "{}\n", describe(err));
    return exit_bad_input;
  }
  graph.code = user->code;
  if (res.count("jobid") > 0) {
    auto text = res["jobid"].as<std::string>();
    auto id = job_id::parse(text);
    if (!id || !id->valid()) {
      fmt::print(stderr, "weir run: --jobid '{}' is not a job id (32 hex "
                         "characters)\n", text);
      return exit_bad_input;
    }
    graph.id = *id;
  }
  std::optional<std::string> restore_from;
  if (res.count("fromSavepoint") > 0)
    restore_from = res["fromSavepoint"].as<std::string>();
  if (res.count("resume") > 0) {
    auto dir = res["resume"].as<std::string>();
    auto newest = newest_checkpoint(dir);
    if (!newest) {
      fmt::print(stderr, "weir run: -r: {}\n", describe(newest.error()));
      return exit_bad_input;
    }
    restore_from = *newest;
    if (restore_from->empty()) {
      fmt::print(stderr, "weir run: -r: no retained checkpoint under '{}'\n",
                 dir);
      return exit_bad_input;
    }
    fmt::print(stderr, "Resuming from checkpoint {}\n", *restore_from);
  }
  if (restore_from) {
    auto path = *restore_from;
    auto flag = res.count("fromSavepoint") > 0 ? "-s" : "-r";
    savepoint_data sp;
    if (auto err = check_restore_file(path, &sp)) {
      fmt::print(stderr, "weir run: {}: {}\n", flag, describe(err));
      return exit_bad_input;
    }
    // What the JobMaster would fail the job for is refused here, before
    // anything is submitted (a detached client would not see it).
    bool skip_unclaimed = res.count("allowNonRestoredState") > 0;
    auto& operators = user->operators != nullptr ? *user->operators
                                                 : ops::registry::builtin();
    if (auto err = check_savepoint_fits(graph, sp, skip_unclaimed, path,
                                        operators)) {
      fmt::print(stderr, "weir run: {}: {}\n", flag, describe(err));
      return exit_bad_input;
    }
    auto key = std::string{keys::savepoint_path.name};
    graph.config[key] = path;
    graph.config_origins[key] = fmt::format("{} {}", flag, path);
    if (skip_unclaimed) {
      key = std::string{keys::savepoint_ignore_unclaimed_state.name};
      graph.config[key] = "true";
      graph.config_origins[key] = "-n";
    }
  } else if (res.count("allowNonRestoredState") > 0) {
    fmt::print(stderr, "weir run: -n needs -s PATH or -r DIR\n");
    return exit_bad_input;
  }
  auto target = flags.jobmanager.empty() ? job_target::embedded
                                          : job_target::session;
  if (report_first("weir run", {carry_job_keys(*cfg, graph, target)}))
    return exit_bad_input;
  if (target == job_target::session)
    return run_remote(flags, *cfg, graph, *user);
  int32_t highest = 1;
  for (auto& v : graph.vertices)
    highest = std::max(highest, v.parallelism);
  if (!slots)
    mc.slots_per_task_executor = slots_for(highest, mc.task_executors);
  auto total = int64_t{mc.task_executors} * mc.slots_per_task_executor;
  if (total < highest) {
    // A local cluster never grows: waiting for slot.request.timeout would
    // only delay the same failure.
    fmt::print(stderr,
               "weir run: the job needs {} slots (its highest parallelism) but "
               "{} x {} give {}\n",
               highest,
               key_with_origin(*cfg, keys::minicluster_task_managers,
                               mc.task_executors, "default"),
               key_with_origin(*cfg, keys::task_slots,
                               mc.slots_per_task_executor,
                               "enough for the job"),
               total);
    return exit_bad_input;
  }
  cancel_on_interrupt();
  // The job's subtasks run in this process: whatever one of them is stuck
  // in, Ctrl-C ends the process within seconds.
  end_process_after_stop("weir run", exit_job_failed);
  if (!start_event_log(res, "weir run", "weir run", nullptr))
    return exit_bad_input;
  caf::actor_system_config system_cfg;
  configure_actor_system(system_cfg);
  caf::actor_system sys{system_cfg};
  auto cluster = start_local_cluster(sys, mc, cfg->get(keys::cluster_id));
  if (!cluster) {
    fmt::print(stderr, "weir run: cannot start the local cluster: {}\n",
               describe(cluster.error()));
    return exit_cluster_error;
  }
  client::dispatcher_jobs jobs{sys, (*cluster)->dispatcher()};
  // Unfinished jobs of the state directory run too: say which, and at the
  // end what became of them.
  auto recovered = mc.state_dir.empty()
                     ? std::vector<job_status>{}
                     : recovered_jobs_of(jobs, graph.id);
  announce_recovered_jobs(recovered, mc.state_dir);
  if (!upload_blobs(jobs, *user, "run")) {
    (*cluster)->stop();
    return exit_cluster_error;
  }
  auto result = submit_and_wait(jobs, graph);
  report_recovered_jobs(jobs, recovered, mc.state_dir, total);
  (*cluster)->stop();
  return result;
}

} // namespace weir::cli
