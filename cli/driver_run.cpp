// `weir run -D`: driver mode. The user's driver program runs as a job of its
// own inside a cluster: a session (-m) or one created for the application.

#include <caf/actor_system.hpp>
#include <caf/scoped_actor.hpp>

#include <cxxopts.hpp>
#include <fmt/format.h>

#include "cli/action_flags.hpp"
#include "cli/actions.hpp"
#include "cli/app_cluster.hpp"
#include "cli/config_flags.hpp"
#include "cli/driver_flags.hpp"
#include "process/exit_codes.hpp"
#include "cli/flag_table.hpp"
#include "cli/job_command.hpp"
#include "cli/job_args.hpp"
#include "cli/remote.hpp"
#include "cli/user_code.hpp"
#include "client/submission.hpp"
#include "process/processes.hpp"
#include "cluster/stop_signal.hpp"
#include "config/keys.hpp"
#include "messages/errors.hpp"
#include "operators/driver_services.hpp"
#include "operators/registry.hpp"

namespace weir::cli {

namespace {

using namespace std::chrono_literals;

} // namespace

cxxopts::Options driver_run_flags() {
  cxxopts::Options opts("weir run -D",
                        "Driver mode: run a driver program (from a user "
                        "library) as a job of its own in a cluster: a session "
                        "(-m), or one created for the application that ends "
                        "with it. Options go before the driver library; what "
                        "follows it is the driver's own arguments.");
  opts.custom_help("-c NAME [OPTIONS] DRIVER_LIBRARY [ARGS...]");
  opts.add_options()
    ("driver", "driver mode (-D)")
    ("c,class", "the driver's registered name", cxxopts::value<std::string>())
    ("m,jobmanager", "HOST:PORT of a session cluster to run in (default: a "
     "cluster created for the application)", cxxopts::value<std::string>())
    ("d,detached", "print the application id and return once the cluster "
     "accepted it")
    ("driverheapmemory", "-Dhm: heap memory of the driver's slot, MB",
     cxxopts::value<int64_t>())
    ("driverdirectmemory", "-Ddm: direct memory of the driver's slot, MB",
     cxxopts::value<int64_t>())
    ("drivercpus", "-Dc: CPU cores of the driver's slot",
     cxxopts::value<double>())
    ("drivernativememory", "-Dnm: native memory of the driver's slot, MB",
     cxxopts::value<int64_t>())
    ("p,parallelism", "default parallelism of the jobs the driver submits "
     "(parallelism.default)", cxxopts::value<int32_t>())
    ("s,fromSavepoint", "the jobs the driver submits start from this "
     "savepoint", cxxopts::value<std::string>())
    ("n,allowNonRestoredState", "with -s or -r: skip state no vertex claims")
    ("r,resume", "the jobs the driver submits start from the newest retained "
     "checkpoint under this directory", cxxopts::value<std::string>())
    ("h,help", "print this help");
  add_user_code_flags(opts);
  add_config_flags(opts);
  return opts;
}

namespace {

/// Options of the seed's table that a C++ runtime does not offer.
std::string out_of_scope(const std::string& flag) {
  auto name = flag.substr(0, flag.find('='));
  if (name == "--mod")
    return "--mod runs a Python module as the driver; weir is a C++ runtime: "
           "write the driver in C++ and register it with WEIR_PLUGIN (see "
           "docs/operations.md § Driver mode)";
  bool yarn = name.rfind("--yarn", 0) == 0
              || (name.size() > 2 && name.rfind("-y", 0) == 0);
  bool k8s = name.rfind("--kubernet", 0) == 0
             || (name.size() > 2 && name.rfind("-k", 0) == 0);
  if (yarn || k8s)
    return fmt::format("{} is a {} option; weir runs application clusters as "
                       "local processes or Slurm jobs "
                       "(resourcemanager.backend), or use -m with a session "
                       "cluster (docs/deployment.md)",
                       name, yarn ? "YARN" : "Kubernetes");
  return {};
}

/// The driver job (client::driver_job_graph) with the driver's slot
/// profile.
job_graph driver_job(const std::string& name, const cxxopts::ParseResult& res,
                     const std::vector<std::string>& program,
                     std::optional<int64_t> parallelism,
                     const std::string& restore_from) {
  auto g = client::driver_job_graph(
    {name, program, parallelism, restore_from,
     res.count("allowNonRestoredState") > 0});
  // The driver's slot profile (-Dhm, -Ddm, -Dnm in MB; -Dc cores).
  for (auto [flag, key] :
       {std::pair{"driverheapmemory", keys::driver_heap_memory},
        std::pair{"driverdirectmemory", keys::driver_direct_memory},
        std::pair{"drivernativememory", keys::driver_native_memory}})
    if (res.count(flag) > 0)
      g.config[std::string{key.name}]
        = fmt::format("{}m", res[flag].as<int64_t>());
  if (res.count("drivercpus") > 0)
    g.config[std::string{keys::driver_cpu_cores.name}]
      = fmt::format("{}", res["drivercpus"].as<double>());
  return g;
}

/// Submits the driver job; attached, waits for it like `weir run`.
int submit_driver(remote_cluster& remote, job_graph g,
                  const prepared_code& code, bool detached) {
  // Attached, a Ctrl-C from here on cancels the application (once it is
  // submitted), however early it comes.
  if (!detached)
    catch_stop_signals(second_signal::ends_process);
  if (!upload_blobs(remote.jobs(), code, "run"))
    return exit_cluster_error;
  auto id = remote.jobs().submit(g);
  if (!id) {
    fmt::print(stderr, "weir run: application rejected: {}\n",
               describe(id.error()));
    return exit_cluster_error;
  }
  fmt::print(stderr, "Application submitted with id {} (its driver job)\n",
             id->to_string());
  if (detached) {
    fmt::print("{}\n", id->to_string());
    return exit_ok;
  }
  return wait_for_job(remote.jobs(), *id, "weir run", true,
                      remote.address());
}

} // namespace

int driver_run_action(const std::vector<std::string>& args) {
  auto split = split_driver_args(args,
                                 flag_table{driver_run_flags()}.value_flags());
  for (auto& f : split.flags)
    if (auto why = out_of_scope(f); !why.empty()) {
      fmt::print(stderr, "weir run: {}\n", why);
      return exit_bad_input;
    }
  if (!split.error.empty()) {
    fmt::print(stderr, "weir run: {}\n", split.error);
    return exit_bad_input;
  }
  // What follows the library is the driver's, as Flink's jar arguments;
  // a weir flag there is most likely misplaced.
  for (auto& a : weir_looking_args(split.program,
                                   listed_flags(driver_run_flags())))
    fmt::print(stderr, "weir run: warning: '{}' after the driver library is "
                       "passed to the driver as an argument; put weir's "
                       "options before DRIVER.so\n",
               a);
  auto opts = driver_run_flags();
  cxxopts::ParseResult res;
  if (auto code = parse_flags(opts, "weir run", split.flags, res); code >= 0)
    return code;
  if (split.library.empty()) {
    fmt::print(stderr, "weir run: driver mode needs the driver's library: weir "
                       "run -D -c NAME LIBRARY [ARGS...]\n");
    return exit_bad_input;
  }
  if (res.count("class") == 0) {
    fmt::print(stderr, "weir run: driver mode needs -c/--class NAME (the name "
                       "the library registers its driver under)\n");
    return exit_bad_input;
  }
  auto cfg = load_config("weir run", res);
  if (!cfg)
    return exit_bad_input;
  if (report_first("weir run",
                   {flag_overrides<int32_t>(
                     *cfg, res, "parallelism", keys::parallelism_default, "",
                     typed_flag(split.flags, "-p", "parallelism"))}))
    return exit_bad_input;
  auto code = prepare_user_code("run", res, {split.library});
  if (!code)
    return exit_bad_input;
  auto name = res["class"].as<std::string>();
  if (code->operators->find_driver(name) == nullptr) {
    auto known = code->operators->driver_names();
    fmt::print(stderr, "weir run: -c/--class: no driver '{}' in '{}' or the "
                       "--libjars libraries (known: {})\n",
               name, split.library,
               known.empty() ? std::string{"none"}
                             : fmt::format("{}", fmt::join(known, ", ")));
    return exit_bad_input;
  }
  std::string restore_from;
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
    if (restore_from.empty()) {
      fmt::print(stderr, "weir run: -r: no retained checkpoint under '{}'\n",
                 dir);
      return exit_bad_input;
    }
  }
  if (!restore_from.empty()) {
    if (auto err = check_restore_file(restore_from)) {
      fmt::print(stderr, "weir run: -s: {}\n", describe(err));
      return exit_bad_input;
    }
  }
  auto graph = driver_job(name, res, split.program,
                          cfg->get_if_set(keys::parallelism_default),
                          restore_from);
  graph.code = code->code;
  bool detached = res.count("detached") > 0;
  remote_cluster remote;
  if (res.count("jobmanager") > 0) {
    if (auto c = remote.connect("weir run",
                                res["jobmanager"].as<std::string>(), *cfg);
        c >= 0)
      return c;
    return submit_driver(remote, std::move(graph), *code, detached);
  }
  // Local workers reach the cluster on loopback; a Slurm backend's on other
  // hosts at jobmanager.rpc.address (a session cluster's address in the
  // configuration file does not move a local application cluster).
  auto listen = cfg->get(keys::resourcemanager_backend) == "slurm"
                  ? cfg->get_if_set(keys::jobmanager_address)
                      .value_or("127.0.0.1")
                  : std::string{"127.0.0.1"};
  auto app_cfg = *cfg;
  if (auto err = app_cfg.apply(
        {{std::string{keys::jobmanager_address.name}, listen}},
        "the application cluster")) {
    fmt::print(stderr, "weir run: {}\n", describe(err));
    return exit_bad_input;
  }
  // What the application cluster's jobmanager would refuse (a listen
  // address without a TLS decision, Slurm commands that are not there) is
  // refused here, in one line, before anything starts.
  if (auto jm = jobmanager_options::from(app_cfg); !jm) {
    fmt::print(stderr, "weir run: {}\n", describe(jm.error()));
    return exit_bad_input;
  }
  // A cluster for this application, with the client's configuration.
  std::vector<std::string> config_args;
  if (res.count("config") > 0)
    config_args = {"--config", res["config"].as<std::string>()};
  for (auto& d : dynamic_flags(res))
    config_args.push_back("-D" + d);
  app_cluster cluster;
  if (!cluster.start(config_args, detached, listen))
    return exit_cluster_error;
  fmt::print(stderr, "Application cluster listening on {} (logs in {}/logs)\n",
             cluster.address(), cluster.dir());
  if (cluster.rest_url().empty()) {
    fmt::print(stderr, "weir run: the application cluster has no REST API "
                       "(logs in {}/logs)\n",
               cluster.dir());
    cluster.kill();
    return exit_cluster_error;
  }
  fmt::print(stderr, "Application cluster REST API at {}\n",
             cluster.rest_url());
  // Its client talks to its REST API, as to a session's; the cluster waits
  // for the client to fetch the result before it ends.
  if (auto c = remote.connect("weir run", cluster.rest_url(), *cfg);
      c >= 0) {
    cluster.kill();
    return c;
  }
  auto result = submit_driver(remote, std::move(graph), *code, detached);
  if (detached) {
    if (result != exit_ok)
      cluster.kill();
    else
      fmt::print(stderr, "weir run: the driver's output goes to "
                         "{}/logs/stdout.txt\n",
                 cluster.dir());
    return result;
  }
  // The cluster ends with the application; every process it started is
  // gone when this returns.
  auto cluster_code = cluster.finish(30000);
  if (cluster_code != 0 && result == exit_ok)
    result = exit_cluster_error;
  if (cluster_code != 0)
    fmt::print(stderr, "weir run: the application cluster ended with code {} "
                       "(logs in {}/logs)\n",
               cluster_code, cluster.dir());
  return result;
}

} // namespace weir::cli
