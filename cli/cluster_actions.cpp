// `weir jobmanager`, `weir taskmanager`: the processes of a session cluster.
#include <filesystem>

#include <unistd.h>

#include <cxxopts.hpp>
#include <fmt/format.h>

#include "cli/action_flags.hpp"
#include "cli/actions.hpp"
#include "cli/app_cluster.hpp"
#include "process/exit_codes.hpp"
#include "cli/config_flags.hpp"
#include "cli/log_flag.hpp"
#include "cli/remote.hpp"
#include "cluster/stop_signal.hpp"
#include "cli/taskmanager_flags.hpp"
#include "process/processes.hpp"
#include "config/keys.hpp"
#include "messages/errors.hpp"

namespace weir::cli {

cxxopts::Options jobmanager_flags() {
  cxxopts::Options opts("weir jobmanager",
                        "Run the master of a session cluster: Dispatcher, "
                        "ResourceManager and the JobMasters of its jobs.");
  opts.add_options()
    ("host", "jobmanager.rpc.address: address to listen on (default "
     "127.0.0.1)", cxxopts::value<std::string>())
    ("port", "jobmanager.rpc.port (default 6123; 0: any free port, see the "
     "log)", cxxopts::value<int64_t>())
    ("state-dir", "high-availability.storageDir (default: "
     "$XDG_STATE_HOME/weir or ~/.local/state/weir)",
     cxxopts::value<std::string>())
    ("log", "append the event log to this file instead of stderr",
     cxxopts::value<std::string>())
    ("application", "driver mode (used by weir run -D without -m): start "
     "workers on demand, end with the application, remove the state "
     "directory")
    ("print-driver-output", "with --application: also write what the "
     "driver prints to stdout (a detached application's logs/stdout.txt)")
    ("h,help", "print this help");
  add_config_flags(opts);
  return opts;
}

namespace {

/// taskmanager.registration.timeout of an application cluster's workers
/// unless the configuration sets it.
constexpr const char* application_worker_registration_timeout = "1 min";

/// The name of an application cluster in its Slurm jobs' names: the
/// directory `weir run` made for it (weir-app-PID-RANDOM, holding the state
/// directory), else weir-app-HOST-PID.
std::string application_cluster_name(const std::string& state_dir) {
  auto dir = std::filesystem::path{state_dir}.parent_path().filename().string();
  if (dir.rfind("weir-app-", 0) == 0)
    return dir;
  char host[256] = "localhost";
  ::gethostname(host, sizeof(host) - 1);
  return fmt::format("weir-app-{}-{}", host, ::getpid());
}

} // namespace

int jobmanager_action(const std::vector<std::string>& args) {
  auto opts = jobmanager_flags();
  cxxopts::ParseResult res;
  int code = exit_ok;
  auto cfg = parse_with_config(opts, "weir jobmanager", args, res, code);
  if (!cfg)
    return code;
  if (report_first(
        "weir jobmanager",
        {flag_overrides<std::string>(*cfg, res, "host",
                                     keys::jobmanager_address),
         flag_overrides<int64_t>(*cfg, res, "port", keys::jobmanager_port),
         flag_overrides<std::string>(*cfg, res, "state-dir",
                                     keys::storage_dir)}))
    return exit_bad_input;
  auto options = jobmanager_options::from(*cfg);
  if (!options) {
    fmt::print(stderr, "weir jobmanager: {}\n", describe(options.error()));
    return exit_bad_input;
  }
  auto& jm = *options;
  jm.job_master.print_driver_output = res.count("print-driver-output") > 0;
  if (res.count("application") > 0) {
    jm.application = true;
    auto& rm = jm.resource_manager;
    rm.active = true;
    rm.worker.program = own_executable();
    auto log_dir = res.count("log") > 0
                     ? std::filesystem::path{res["log"].as<std::string>()}
                         .parent_path()
                         .string()
                     : jm.state_dir + ".logs";
    // Workers get the master's configuration (cluster id, heartbeats...).
    auto forwarded = config_args(res);
    // A worker that outlives its application's jobmanager (a Slurm job
    // whose jobmanager was killed with SIGKILL) ends by itself.
    if (!cfg->is_set(keys::taskmanager_registration_timeout))
      forwarded.push_back(fmt::format(
        "-D{}={}", keys::taskmanager_registration_timeout.name,
        application_worker_registration_timeout));
    rm.worker.arguments = [log_dir, forwarded](const worker_request& w) {
      return taskmanager_arguments(w, log_dir, forwarded);
    };
    rm.worker.log_dir = log_dir;
    rm.worker.cluster_name = application_cluster_name(jm.state_dir);
    std::error_code ec;
    std::filesystem::create_directories(log_dir, ec);
  }
  if (!start_event_log(res, "weir jobmanager", "jobmanager", stderr))
    return exit_bad_input;
  if (jm.application)
    remove_at_exit(jm.state_dir);
  auto result = run_jobmanager(jm);
  if (jm.application) {
    // An application cluster keeps no state once its application ended.
    std::error_code ec;
    std::filesystem::remove_all(jm.state_dir, ec);
  }
  return result;
}

int taskmanager_action(const std::vector<std::string>& args) {
  auto opts = taskmanager_flags();
  cxxopts::ParseResult res;
  int code = exit_ok;
  auto cfg = parse_with_config(opts, "weir taskmanager", args, res, code);
  if (!cfg)
    return code;
  auto address = jobmanager_address(res, *cfg);
  auto at = parse_endpoints(address);
  if (!at) {
    fmt::print(stderr, "weir taskmanager: {}\n",
               bad_jobmanager_address(res, *cfg));
    return exit_bad_input;
  }
  if (report_first(
        "weir taskmanager",
        {flag_replaces<int32_t>(*cfg, res, "slots", keys::task_slots),
         flag_replaces<std::string>(*cfg, res, "id", keys::resource_id),
         flag_replaces<double>(*cfg, res, "cpu-cores",
                               keys::taskmanager_cpu_cores),
         flag_replaces<int64_t>(*cfg, res, "memory", keys::taskmanager_heap,
                                "m"),
         flag_replaces<int64_t>(*cfg, res, "direct-memory",
                                keys::taskmanager_off_heap, "m"),
         flag_replaces<int64_t>(*cfg, res, "native-memory",
                                keys::taskmanager_managed, "m")}))
    return exit_bad_input;
  auto tm = taskmanager_options::from(*cfg);
  if (auto problem = tm.metrics_port_problem(); !problem.empty()) {
    fmt::print(stderr, "weir taskmanager: {}\n", problem);
    return exit_bad_input;
  }
  tm.jobmanagers = *at;
  if (!start_event_log(res, "weir taskmanager", "taskmanager " + tm.id,
                       stderr))
    return exit_bad_input;
  return run_taskmanager(tm);
}

} // namespace weir::cli
