// `weir checkpoint`, `weir savepoint`, `weir stop` and `weir rescale` against a session
// cluster (Flink's CLI names and flags).
#include <cstdio>
#include <filesystem>

#include <cxxopts.hpp>
#include <fmt/format.h>

#include "cli/action_flags.hpp"
#include "cli/actions.hpp"
#include "cli/config_flags.hpp"
#include "process/exit_codes.hpp"
#include "cli/flag_table.hpp"
#include "cli/job_args.hpp"
#include "cli/remote.hpp"
#include "config/keys.hpp"
#include "messages/errors.hpp"
#include "messages/job_graph.hpp"

namespace weir::cli {

namespace {

using namespace std::chrono_literals;

/// The savepoint directory: `given`, else the client's
/// execution.checkpointing.savepoint-dir, made absolute (the jobmanager
/// writes there); "" when neither is set: the job's own or the jobmanager's
/// then applies.
std::string savepoint_dir(const std::string& given,
                          const configuration& cfg) {
  auto dir = given.empty() ? cfg.get(keys::savepoint_dir) : given;
  if (dir.empty())
    return {};
  return std::filesystem::absolute(dir).lexically_normal().string();
}

/// Asks for a savepoint (and a stop after it); prints its path.
int take_savepoint(const std::string& action, remote_cluster& remote,
                   const job_id& id, const std::string& dir,
                   savepoint_mode mode) {
  auto path = remote.jobs().savepoint(id, dir, mode);
  if (!path) {
    fmt::print(stderr, "{}\n", job_error_line(action, path.error(), id, remote.address()));
    return exit_code_for_job_error(path.error());
  }
  fmt::print("Savepoint completed. Path: {}\n", *path);
  if (mode != savepoint_mode::keep_running)
    fmt::print("Job {} is stopped.\n", id.to_string());
  return exit_ok;
}

/// `weir savepoint -d PATH`.
int dispose_savepoint(std::string path) {
  if (auto err = check_restore_file(path)) {
    fmt::print(stderr, "weir savepoint: -d: {}\n", describe(err));
    return exit_bad_input;
  }
  std::error_code ec;
  if (!std::filesystem::remove(path, ec)) {
    fmt::print(stderr, "weir savepoint: -d: cannot remove '{}': {}\n", path,
               ec.message());
    return exit_cluster_error;
  }
  fmt::print("Disposed savepoint {}.\n", path);
  return exit_ok;
}

} // namespace

cxxopts::Options checkpoint_flags() {
  auto opts = job_action_flags("weir checkpoint",
                               "Take a checkpoint of a running job now.",
                               " [--full]");
  opts.add_options()("full", "a full checkpoint, sharing no files with "
                             "earlier ones (matters with incremental RocksDB "
                             "checkpoints)");
  return opts;
}

int checkpoint_action(const std::vector<std::string>& args) {
  remote_cluster remote;
  int code = exit_ok;
  cxxopts::ParseResult res;
  auto opts = checkpoint_flags();
  auto id = connect_for_job("weir checkpoint", opts, args, remote, code, res);
  if (!id)
    return code;
  auto n = remote.jobs().checkpoint(*id, res.count("full") > 0);
  if (!n) {
    fmt::print(stderr, "{}\n",
               job_error_line("weir checkpoint", n.error(), *id,
                              remote.address()));
    return exit_code_for_job_error(n.error());
  }
  fmt::print("Checkpoint {} of job {} completed.\n", *n, id->to_string());
  return exit_ok;
}

cxxopts::Options savepoint_flags() {
  auto opts = job_action_flags("weir savepoint",
                               "Take a savepoint of a running job, or dispose "
                               "of one (-d).",
                               " [DIR] | weir savepoint -d PATH");
  opts.add_options()("d,dispose", "dispose of (delete) the savepoint at "
                                  "PATH; needs no cluster",
                     cxxopts::value<std::string>());
  opts.add_options(positional_group)("directory", "where the savepoint goes",
                                     cxxopts::value<std::string>());
  opts.parse_positional({"jobid", "directory"});
  return opts;
}

int savepoint_action(const std::vector<std::string>& args) {
  const std::string action = "weir savepoint";
  auto opts = savepoint_flags();
  cxxopts::ParseResult res;
  if (auto code = parse_flags(opts, action, args, res); code >= 0)
    return code;
  if (res.count("dispose") > 0) {
    if (res.count("jobid") > 0 || res.count("jobmanager") > 0) {
      fmt::print(stderr, "{}: -d PATH disposes of a savepoint and takes no "
                         "JOBID, DIR or -m (see {} --help)\n",
                 action, action);
      return exit_bad_input;
    }
    return dispose_savepoint(res["dispose"].as<std::string>());
  }
  int code = exit_ok;
  auto id = job_id_flag(action, res, code);
  if (!id)
    return code;
  remote_cluster remote;
  if (code = remote.connect(action, res); code >= 0)
    return code;
  auto given = res.count("directory") > 0 ? res["directory"].as<std::string>()
                                          : std::string{};
  auto cfg = load_config(action, res);
  if (!cfg)
    return exit_bad_input;
  return take_savepoint(action, remote, *id, savepoint_dir(given, *cfg),
                        savepoint_mode::keep_running);
}

cxxopts::Options stop_flags() {
  auto opts = job_action_flags("weir stop",
                               "Stop a running job with a savepoint.",
                               " [--savepointPath DIR] [--drain]");
  opts.add_options()
    ("p,savepointPath", "where the savepoint goes (default: "
     "execution.checkpointing.savepoint-dir)", cxxopts::value<std::string>())
    ("drain", "advance event time to the end first, so that every window "
     "and timer fires (for a job that will not resume; as Flink's)");
  return opts;
}

int stop_action(const std::vector<std::string>& args) {
  remote_cluster remote;
  int code = exit_ok;
  cxxopts::ParseResult res;
  auto opts = stop_flags();
  auto id = connect_for_job("weir stop", opts, args, remote, code, res);
  if (!id)
    return code;
  auto given = res.count("savepointPath") > 0
                 ? res["savepointPath"].as<std::string>()
                 : std::string{};
  auto cfg = load_config("weir stop", res);
  if (!cfg)
    return exit_bad_input;
  auto dir = savepoint_dir(given, *cfg);
  fmt::print("Suspending job {} with a savepoint.\n", id->to_string());
  std::fflush(stdout); // shown while the savepoint is taken, even in a pipe
  return take_savepoint("weir stop", remote, *id, dir,
                        res.count("drain") > 0 ? savepoint_mode::stop_and_drain
                                               : savepoint_mode::stop);
}

} // namespace weir::cli

namespace weir::cli {

cxxopts::Options rescale_flags() {
  auto opts = job_action_flags("weir rescale",
                               "Run every vertex of a running job at another "
                               "parallelism, in place, from a checkpoint taken "
                               "now.",
                               " -p N");
  opts.add_options()("p,parallelism", "the new parallelism of every vertex "
                                      "(1 up to the job's max parallelism)",
                     cxxopts::value<int32_t>());
  return opts;
}

int rescale_action(const std::vector<std::string>& args) {
  remote_cluster remote;
  int code = exit_ok;
  cxxopts::ParseResult res;
  auto opts = rescale_flags();
  auto id = connect_for_job("weir rescale", opts, args, remote, code, res);
  if (!id)
    return code;
  if (res.count("parallelism") == 0) {
    fmt::print(stderr, "weir rescale: -p N is missing: the new parallelism\n");
    return exit_bad_input;
  }
  auto n = res["parallelism"].as<int32_t>();
  if (n < 1 || n > max_parallelism) {
    fmt::print(stderr, "weir rescale: -p {}: expected 1 to {}\n", n,
               max_parallelism);
    return exit_bad_input;
  }
  fmt::print("Rescaling job {} to parallelism {}.\n", id->to_string(), n);
  std::fflush(stdout); // shown while the checkpoint is taken, even in a pipe
  auto done = remote.jobs().rescale(*id, n);
  if (!done) {
    fmt::print(stderr, "{}\n",
               job_error_line("weir rescale", done.error(), *id,
                              remote.address()));
    return exit_code_for_job_error(done.error());
  }
  fmt::print("Job {} runs at parallelism {}.\n", id->to_string(), *done);
  return exit_ok;
}

} // namespace weir::cli
