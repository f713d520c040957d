// `weir repair-state`: drops the damaged records of a state directory's
// write-ahead log and says what they held. Flink has no such command (its
// HA stores live in ZooKeeper or Kubernetes); the name says what it works
// on, and --state-dir is the flag `weir jobmanager` and `weir run` take.
#include <cxxopts.hpp>
#include <fmt/format.h>

#include "cli/action_flags.hpp"
#include "cli/actions.hpp"
#include "cli/config_flags.hpp"
#include "process/exit_codes.hpp"
#include "cli/remote.hpp"
#include "config/keys.hpp"
#include "messages/errors.hpp"
#include "storage/state_repair.hpp"

namespace weir::cli {

cxxopts::Options repair_state_flags() {
  cxxopts::Options opts("weir repair-state",
                        "Drop the damaged records of a state directory's "
                        "write-ahead log (the jobmanager refuses to start on "
                        "one) and print what each held. Stop the jobmanager "
                        "first.");
  opts.add_options()
    ("state-dir", "the state directory (default: high-availability.storageDir "
     "if the configuration sets it)", cxxopts::value<std::string>())
    ("dry-run", "only print what a repair would drop; change nothing")
    ("h,help", "print this help");
  add_config_flags(opts);
  return opts;
}

int repair_state_action(const std::vector<std::string>& args) {
  const std::string action = "weir repair-state";
  auto opts = repair_state_flags();
  cxxopts::ParseResult res;
  int code = exit_ok;
  auto cfg = parse_with_config(opts, action, args, res, code);
  if (!cfg)
    return code;
  if (auto err = flag_overrides<std::string>(*cfg, res, "state-dir",
                                             keys::storage_dir)) {
    fmt::print(stderr, "{}: {}\n", action, describe(err));
    return exit_bad_input;
  }
  if (!cfg->is_set(keys::storage_dir)) {
    fmt::print(stderr, "{}: missing --state-dir DIR (or "
                       "high-availability.storageDir in the configuration)\n",
               action);
    return exit_bad_input;
  }
  auto dir = cfg->get(keys::storage_dir);
  bool dry_run = res.count("dry-run") > 0;
  auto report = storage::repair_state_dir(dir, dry_run);
  if (!report) {
    fmt::print(stderr, "{}: {}\n", action, describe(report.error()));
    return exit_cluster_error;
  }
  if (!report->salvaged.empty()) {
    fmt::print("{}: {}: {} CURRENT and the MANIFEST from the table files and "
               "logs with RocksDB's RepairDB\n",
               dir, report->salvaged, dry_run ? "would rebuild" : "rebuilt");
    if (!report->lost_dir.empty())
      fmt::print("Every file as it was is kept in {}.\n", report->lost_dir);
    return exit_ok;
  }
  if (report->dropped.empty()) {
    fmt::print("{}: nothing is damaged\n", dir);
    return exit_ok;
  }
  fmt::print("{}: {} {} damaged write-ahead log record{}:\n", dir,
             dry_run ? "would drop" : "dropped", report->dropped.size(),
             report->dropped.size() == 1 ? "" : "s");
  for (auto& line : report->dropped)
    fmt::print("  {}\n", line);
  if (!report->lost_dir.empty())
    fmt::print("The damaged files are kept unchanged in {}.\n",
               report->lost_dir);
  return exit_ok;
}

} // namespace weir::cli
