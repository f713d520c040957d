#include "cli/taskmanager_flags.hpp"

#include <fmt/format.h>

#include "cli/config_flags.hpp"

namespace weir::cli {

namespace {

/// A per-slot amount times the slots, as a whole number of MB.
std::string mb(int64_t per_slot, int32_t slots) {
  return fmt::format("{}", static_cast<int64_t>(static_cast<double>(per_slot)
                                                * slots));
}

} // namespace

cxxopts::Options taskmanager_flags() {
  cxxopts::Options opts("weir taskmanager",
                        "Run a worker of a session cluster: a TaskExecutor "
                        "that registers with the jobmanager.");
  opts.add_options()
    ("m,jobmanager", "HOST:PORT of the jobmanager, or etcd://HOST:PORT "
     "of an etcd that names the leader (default "
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
  add_config_flags(opts);
  return opts;
}

std::vector<std::string> taskmanager_arguments(const worker_request& w,
                                               const std::string& log_dir,
                                               const std::vector<std::string>& config_args) {
  std::vector<std::string> args{"taskmanager", "-m", w.jobmanager,
                                "--id", w.id.value, "--slots",
                                std::to_string(w.slots)};
  auto& slot = w.slot;
  if (slot.cpu_cores > 0)
    args.insert(args.end(), {"--cpu-cores",
                             fmt::format("{}", slot.cpu_cores * w.slots)});
  if (slot.heap_mb > 0)
    args.insert(args.end(), {"--memory", mb(slot.heap_mb, w.slots)});
  if (slot.direct_mb > 0)
    args.insert(args.end(), {"--direct-memory", mb(slot.direct_mb, w.slots)});
  if (slot.native_mb > 0)
    args.insert(args.end(), {"--native-memory", mb(slot.native_mb, w.slots)});
  args.insert(args.end(), {"--log", fmt::format("{}/{}.log", log_dir,
                                                w.id.value)});
  args.insert(args.end(), config_args.begin(), config_args.end());
  return args;
}

} // namespace weir::cli
