// `weir jobmanager`, `weir taskmanager`: the processes of a session cluster.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include <cxxopts.hpp>
#include <fmt/format.h>

#include "actors/common/event_log.hpp"
#include "cli/actions.hpp"
#include "cli/app_cluster.hpp"
#include "cli/exit_codes.hpp"
#include "cli/config_flags.hpp"
#include "cli/remote.hpp"
#include "cluster/processes.hpp"

namespace weir::cli {

namespace {

/// high-availability.storageDir default: $XDG_STATE_HOME/weir, else
/// ~/.local/state/weir (under the user's home, so every working directory
/// finds the same state).
std::string default_state_dir() {
  if (auto* xdg = std::getenv("XDG_STATE_HOME"); xdg != nullptr && *xdg != 0)
    return std::string{xdg} + "/weir";
  auto* home = std::getenv("HOME");
  return std::string{home != nullptr ? home : "."} + "/.local/state/weir";
}

std::FILE* open_log(const cxxopts::ParseResult& res, const std::string& action) {
  if (res.count("log") == 0)
    return stderr;
  auto path = res["log"].as<std::string>();
  auto* f = std::fopen(path.c_str(), "a");
  if (f == nullptr)
    fmt::print(stderr, "{}: cannot open log file '{}'\n", action, path);
  return f;
}

} // namespace

int jobmanager_action(const std::vector<std::string>& args) {
  cxxopts::Options opts("weir jobmanager",
                        "Run the master of a session cluster: Dispatcher, "
                        "ResourceManager and the JobMasters of its jobs.");
  opts.add_options()
    ("host", "jobmanager.rpc.address: address to listen on (default "
     "127.0.0.1)", cxxopts::value<std::string>())
    ("port", "jobmanager.rpc.port (default 6123; 0: any free port, see the "
     "log)", cxxopts::value<uint16_t>())
    ("state-dir", "high-availability.storageDir (default: "
     "$XDG_STATE_HOME/weir or ~/.local/state/weir)",
     cxxopts::value<std::string>())
    ("log", "append the event log to this file instead of stderr",
     cxxopts::value<std::string>())
    ("application", "driver mode (used by weir run -D without -m): start "
     "workers on demand, end with the application, remove the state "
     "directory")
    ("h,help", "print this help");
  cxxopts::ParseResult res;
  int code = exit_ok;
  auto cfg = parse_with_config(opts, "weir jobmanager", args, res, code);
  if (!cfg)
    return code;
  jobmanager_options jm;
  jm.address = res.count("host") > 0 ? res["host"].as<std::string>()
                                     : cfg->text("jobmanager.rpc.address");
  auto port = res.count("port") > 0 ? int64_t{res["port"].as<uint16_t>()}
                                    : cfg->integer("jobmanager.rpc.port");
  if (port < 0 || port > 65535) {
    fmt::print(stderr, "weir jobmanager: jobmanager.rpc.port {} is outside "
                       "[0, 65535]\n", port);
    return exit_bad_input;
  }
  jm.port = static_cast<uint16_t>(port);
  if (res.count("state-dir") > 0)
    jm.state_dir = res["state-dir"].as<std::string>();
  else if (cfg->is_set("high-availability.storageDir"))
    jm.state_dir = cfg->text("high-availability.storageDir");
  else
    jm.state_dir = default_state_dir();
  jm.resource_manager.evenly_spread_out_slots
    = cfg->boolean("cluster.evenly-spread-out-slots");
  jm.job_master.slot_request_timeout = cfg->duration("slot.request.timeout");
  jm.remote = remoting::from(*cfg);
  jm.job_master.config = *cfg;
  jm.supervision = supervision_options::from(*cfg);
  jm.resource_manager.heartbeat = heartbeat_options::from(*cfg);
  jm.job_master.heartbeat = jm.resource_manager.heartbeat;
  if (res.count("application") > 0) {
    jm.application = true;
    auto& rm = jm.resource_manager;
    rm.active = true;
    rm.pool.slots_per_worker
      = static_cast<int32_t>(cfg->integer("taskmanager.numberOfTaskSlots"));
    rm.pool.idle_timeout = cfg->duration("resourcemanager.taskmanager-timeout");
    rm.pool.max_failures_per_minute = static_cast<int32_t>(
      cfg->number("resourcemanager.start-worker.max-failure-rate"));
    rm.worker.program = own_executable();
    // Workers get the master's configuration (cluster id, heartbeats...).
    if (res.count("config") > 0)
      rm.worker.extra_args = {"--config", res["config"].as<std::string>()};
    if (res.count("D") > 0)
      for (auto& d : res["D"].as<std::vector<std::string>>())
        rm.worker.extra_args.push_back("-D" + d);
    rm.worker.log_dir = res.count("log") > 0
                          ? std::filesystem::path{res["log"].as<std::string>()}
                              .parent_path()
                              .string()
                          : jm.state_dir + ".logs";
    std::error_code ec;
    std::filesystem::create_directories(rm.worker.log_dir, ec);
  }
  auto* log = open_log(res, "weir jobmanager");
  if (log == nullptr)
    return exit_bad_input;
  enable_event_log(log, "jobmanager");
  auto result = run_jobmanager(jm);
  if (jm.application) {
    // An application cluster keeps no state once its application ended.
    std::error_code ec;
    std::filesystem::remove_all(jm.state_dir, ec);
  }
  return result;
}

int taskmanager_action(const std::vector<std::string>& args) {
  cxxopts::Options opts("weir taskmanager",
                        "Run a worker of a session cluster: a TaskExecutor "
                        "that registers with the jobmanager.");
  opts.add_options()
    ("m,jobmanager", "HOST:PORT of the jobmanager (default "
     "jobmanager.rpc.address:jobmanager.rpc.port)",
     cxxopts::value<std::string>())
    ("slots", "taskmanager.numberOfTaskSlots (default 1)",
     cxxopts::value<int32_t>())
    ("cpu-cores", "taskmanager.cpu.cores, split over the slots",
     cxxopts::value<double>())
    ("memory", "taskmanager.memory.task.heap.size in MB, split over the slots",
     cxxopts::value<int64_t>())
    ("direct-memory", "taskmanager.memory.task.off-heap.size in MB, split "
     "over the slots", cxxopts::value<int64_t>())
    ("native-memory", "taskmanager.memory.managed.size in MB, split over the "
     "slots", cxxopts::value<int64_t>())
    ("id", "taskmanager.resource-id (default: HOST-PID)",
     cxxopts::value<std::string>())
    ("log", "append the event log to this file instead of stderr",
     cxxopts::value<std::string>())
    ("h,help", "print this help");
  cxxopts::ParseResult res;
  int code = exit_ok;
  auto cfg = parse_with_config(opts, "weir taskmanager", args, res, code);
  if (!cfg)
    return code;
  auto address = jobmanager_address(res, *cfg);
  auto at = parse_endpoints(address);
  if (!at) {
    fmt::print(stderr, "weir taskmanager: -m '{}' is not HOST:PORT[,HOST:PORT...]\n",
               address);
    return exit_bad_input;
  }
  taskmanager_options tm;
  tm.jobmanagers = *at;
  tm.remote = remoting::from(*cfg);
  tm.initial_backoff = cfg->duration("cluster.registration.initial-timeout");
  tm.max_backoff = cfg->duration("cluster.registration.max-timeout");
  tm.heartbeat = heartbeat_options::from(*cfg);
  tm.local_state_root = cfg->text("taskmanager.state.local.root-dirs");
  tm.slots = res.count("slots") > 0
               ? res["slots"].as<int32_t>()
               : static_cast<int32_t>(cfg->integer("taskmanager.numberOfTaskSlots"));
  if (tm.slots < 1 || tm.slots > 32768) {
    fmt::print(stderr, "weir taskmanager: --slots {} is outside [1, 32768]\n",
               tm.slots);
    return exit_bad_input;
  }
  auto cores = res.count("cpu-cores") > 0 ? res["cpu-cores"].as<double>()
                                          : cfg->number("taskmanager.cpu.cores");
  auto heap = res.count("memory") > 0
                ? res["memory"].as<int64_t>()
                : cfg->memory_mb("taskmanager.memory.task.heap.size");
  auto direct = res.count("direct-memory") > 0
                  ? res["direct-memory"].as<int64_t>()
                  : cfg->memory_mb("taskmanager.memory.task.off-heap.size");
  auto native = res.count("native-memory") > 0
                  ? res["native-memory"].as<int64_t>()
                  : cfg->memory_mb("taskmanager.memory.managed.size");
  tm.slot_profile.cpu_cores = cores / tm.slots;
  tm.slot_profile.heap_mb = heap / tm.slots;
  tm.slot_profile.direct_mb = direct / tm.slots;
  tm.slot_profile.native_mb = native / tm.slots;
  if (res.count("id") > 0) {
    tm.id = res["id"].as<std::string>();
  } else if (cfg->is_set("taskmanager.resource-id")) {
    tm.id = cfg->text("taskmanager.resource-id");
  } else {
    char host[256] = "localhost";
    gethostname(host, sizeof(host) - 1);
    tm.id = fmt::format("{}-{}", host, getpid());
  }
  auto* log = open_log(res, "weir taskmanager");
  if (log == nullptr)
    return exit_bad_input;
  enable_event_log(log, "taskmanager " + tm.id);
  return run_taskmanager(tm);
}

} // namespace weir::cli
