// `weir jobmanager`, `weir taskmanager`: the processes of a session cluster.
#include <unistd.h>

#include <cstdlib>

#include <cxxopts.hpp>
#include <fmt/format.h>

#include "actors/common/event_log.hpp"
#include "cli/actions.hpp"
#include "cli/exit_codes.hpp"
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
    ("host", "jobmanager.rpc.address: address to listen on",
     cxxopts::value<std::string>()->default_value("127.0.0.1"))
    ("port", "jobmanager.rpc.port (0: any free port, see the log)",
     cxxopts::value<uint16_t>()->default_value("6123"))
    ("state-dir", "high-availability.storageDir (default: "
     "$XDG_STATE_HOME/weir or ~/.local/state/weir)",
     cxxopts::value<std::string>())
    ("log", "append the event log to this file instead of stderr",
     cxxopts::value<std::string>())
    ("h,help", "print this help");
  cxxopts::ParseResult res;
  if (auto code = parse_flags(opts, "weir jobmanager", args, res); code >= 0)
    return code;
  jobmanager_options jm;
  jm.address = res["host"].as<std::string>();
  jm.port = res["port"].as<uint16_t>();
  jm.state_dir = res.count("state-dir") > 0 ? res["state-dir"].as<std::string>()
                                            : default_state_dir();
  auto* log = open_log(res, "weir jobmanager");
  if (log == nullptr)
    return exit_bad_input;
  enable_event_log(log, "jobmanager");
  return run_jobmanager(jm);
}

int taskmanager_action(const std::vector<std::string>& args) {
  cxxopts::Options opts("weir taskmanager",
                        "Run a worker of a session cluster: a TaskExecutor "
                        "that registers with the jobmanager.");
  opts.add_options()
    ("m,jobmanager", "HOST:PORT of the jobmanager", cxxopts::value<std::string>())
    ("slots", "taskmanager.numberOfTaskSlots",
     cxxopts::value<int32_t>()->default_value("1"))
    ("cpu-cores", "taskmanager.cpu.cores, split over the slots",
     cxxopts::value<double>()->default_value("0"))
    ("memory", "task heap memory in MB, split over the slots",
     cxxopts::value<int64_t>()->default_value("0"))
    ("id", "taskmanager.resource-id (default: HOST-PID)",
     cxxopts::value<std::string>())
    ("log", "append the event log to this file instead of stderr",
     cxxopts::value<std::string>())
    ("h,help", "print this help");
  cxxopts::ParseResult res;
  if (auto code = parse_flags(opts, "weir taskmanager", args, res); code >= 0)
    return code;
  if (res.count("jobmanager") == 0) {
    fmt::print(stderr, "weir taskmanager: missing -m HOST:PORT of the "
                       "jobmanager\n");
    return exit_bad_input;
  }
  auto at = parse_endpoint(res["jobmanager"].as<std::string>());
  if (!at) {
    fmt::print(stderr, "weir taskmanager: -m '{}' is not HOST:PORT\n",
               res["jobmanager"].as<std::string>());
    return exit_bad_input;
  }
  taskmanager_options tm;
  tm.jobmanager = *at;
  tm.slots = res["slots"].as<int32_t>();
  if (tm.slots < 1 || tm.slots > 32768) {
    fmt::print(stderr, "weir taskmanager: --slots {} is outside [1, 32768]\n",
               tm.slots);
    return exit_bad_input;
  }
  tm.slot_profile.cpu_cores = res["cpu-cores"].as<double>() / tm.slots;
  tm.slot_profile.heap_mb = res["memory"].as<int64_t>() / tm.slots;
  if (res.count("id") > 0) {
    tm.id = res["id"].as<std::string>();
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
