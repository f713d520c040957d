#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "cli/actions.hpp"
#include "config/build_features.hpp"
#include "rest/job_inspection.hpp"
#include "process/exit_codes.hpp"

namespace weir::cli {

namespace {

constexpr const char* usage = R"(weir: a cluster runtime for dataflow jobs

Usage: weir ACTION [OPTIONS] [ARGS]

Actions:
  run SPEC [OPTIONS] [--PARAM VALUE ...]
                 run a job (a JSON job spec) on an embedded local cluster
  run -m HOST:PORT [-d] SPEC ...
                 run a job on a session cluster (-d: return once submitted)
  run -D -c NAME [OPTIONS] DRIVER_LIBRARY [ARGS...]
                 driver mode: run a driver program from a user library in a
                 cluster of its own, or in a session with -m
  info SPEC [OPTIONS] [--PARAM VALUE ...]
                 print the job's execution plan without running it
  list [-m HOST:PORT] [-r|-s|-a]
                 list the jobs of a session cluster
  status [-m HOST:PORT] JOBID
                 show a job: state, counters, where each subtask runs
  wait [-m HOST:PORT] JOBID
                 wait for a job's result (say, after the master restarted)
  cancel [-m HOST:PORT] JOBID
                 cancel a job of a session cluster
  checkpoint [-m HOST:PORT] JOBID [--full]
                 take a checkpoint of a running job now
  savepoint [-m HOST:PORT] JOBID [DIR] | savepoint -d PATH
                 take a savepoint of a running job (-d: dispose of one)
  stop [-m HOST:PORT] JOBID [-p DIR] [--drain]
                 stop a running job with a savepoint (resume: run -s PATH)
  rescale [-m HOST:PORT] JOBID -p N
                 run every vertex of a running job at parallelism N, in place
  jobmanager [--host ADDR] [--port PORT] [--state-dir DIR]
                 run the master process of a session cluster
  taskmanager [-m HOST:PORT] [--slots N]
                 run a worker process of a session cluster
  repair-state --state-dir DIR [--dry-run]
                 drop damaged write-ahead log records, printing what each held
  cert ca|node|client --dir DIR [--name NAME] [--host H]... [--days N]
                 make the cluster's CA, or a node or client certificate for TLS

Every action but cert takes --config FILE (YAML, Flink's key names) and
-Dkey=value (a configuration key). A client's -m names the jobmanager's REST
API (default rest.address or jobmanager.rpc.address, and rest.port: 8081); a
taskmanager's its RPC port (default jobmanager.rpc.address and
jobmanager.rpc.port: 6123). weir's flags go anywhere after the action (driver
mode: before the driver library). Run 'weir ACTION --help' for an action's
flags, 'weir --version' for the version.
)";

using action_fn = int (*)(const std::vector<std::string>&);

/// Each action's name and function.
const std::pair<const char*, action_fn> actions[] = {
  {"run", run_action},
  {"info", info_action},
  {"jobmanager", jobmanager_action},
  {"taskmanager", taskmanager_action},
  {"list", list_action},
  {"cancel", cancel_action},
  {"status", status_action},
  {"wait", wait_action},
  {"checkpoint", checkpoint_action},
  {"savepoint", savepoint_action},
  {"stop", stop_action},
  {"rescale", rescale_action},
  {"repair-state", repair_state_action},
  {"cert", cert_action},
  // Internal: the jobmanager's REST API runs it to load a submission's
  // libraries outside its own process (rest/job_inspection.hpp).
  {"inspect-job", run_job_inspection},
};

} // namespace

int weir_main(std::vector<std::string> args, const std::string& allocator) {
  if (args.empty()) {
    fmt::print(stderr, "{}", usage);
    return exit_bad_input;
  }
  auto action = args.front();
  args.erase(args.begin());
  if (action == "-h" || action == "--help" || action == "help") {
    fmt::print("{}", usage);
    return exit_ok;
  }
  if (action == "--version" || action == "-v" || action == "version") {
    fmt::print("weir {}\n", WEIR_VERSION);
    // Whether a job could crash this cluster on request (a test build).
    fmt::print("test hooks (weir.fault.*): {}\n",
               WEIR_FAULT_INJECTION ? "compiled in (-Dfault_injection=true; "
                                      "a test build, not for production)"
                                    : "not compiled in");
    fmt::print("memory allocator: {}\n", allocator);
    return exit_ok;
  }
  for (auto& [name, run] : actions)
    if (action == name)
      return run(args);
  fmt::print(stderr, "weir: unknown action '{}' (known: run, info, list, "
                     "status, wait, cancel, checkpoint, savepoint, stop, rescale, "
                     "jobmanager, "
                     "taskmanager, repair-state, cert; see "
                     "weir --help)\n",
             action);
  return exit_bad_input;
}

} // namespace weir::cli
