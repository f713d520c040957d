// weir-sim: runs whole simulated clusters on virtual time, one per seed,
// with faults drawn from the seed, and checks the invariants throughout
// (docs/simulation.md). Prints `seed S trace HASH` per seed; exits 1 when
// an invariant broke, 2 on a bad flag.

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include <cxxopts.hpp>
#include <fmt/format.h>

#include "sim/cluster.hpp"

namespace {

using namespace weir::sim;

constexpr int exit_broken = 1;
constexpr int exit_usage = 2;

struct seed_range {
  uint64_t first = 1;
  uint64_t last = 1;
};

/// "S", "A-B" (inclusive) or a comma-separated list of them; "" when fine,
/// else why not.
std::string parse_seeds(const std::string& text, std::vector<seed_range>& out) {
  auto bad = [&](const std::string& part) {
    return fmt::format("--seeds: '{}' is not a seed or a range A-B "
                       "(0 <= A <= B)",
                       part);
  };
  auto number = [](const std::string& t, uint64_t& n) {
    if (t.empty() || t.find_first_not_of("0123456789") != std::string::npos
        || t.size() > 19)
      return false;
    n = std::stoull(t);
    return true;
  };
  out.clear();
  size_t from = 0;
  while (from <= text.size()) {
    auto comma = text.find(',', from);
    auto part = text.substr(from, comma == std::string::npos
                                    ? std::string::npos
                                    : comma - from);
    seed_range r;
    auto dash = part.find('-');
    if (dash == std::string::npos) {
      if (!number(part, r.first))
        return bad(part);
      r.last = r.first;
    } else if (!number(part.substr(0, dash), r.first)
               || !number(part.substr(dash + 1), r.last)
               || r.last < r.first) {
      return bad(part);
    }
    out.push_back(r);
    if (comma == std::string::npos)
      break;
    from = comma + 1;
  }
  return {};
}

std::string replay_command(const run_options& o, uint64_t seed,
                           const std::string& faults) {
  return fmt::format("weir-sim --seed {} --taskmanagers {} --slots {} --jobs {} "
                     "--jobs-of {} --rows {} --faults {} --fault-count {} "
                     "--fault-window-ms {} --liveness-ms {} "
                     "--connection-timeout-ms {}",
                     seed, o.taskmanagers, o.slots, o.jobs,
                     o.sum_jobs ? "all" : "numbers", o.max_rows, faults,
                     o.fault_count,
                     std::chrono::duration_cast<std::chrono::milliseconds>(
                       o.fault_window)
                       .count(),
                     std::chrono::duration_cast<std::chrono::milliseconds>(
                       o.liveness)
                       .count(),
                     std::chrono::duration_cast<std::chrono::milliseconds>(
                       o.connection_timeout)
                       .count());
}

int usage_error(const std::string& what) {
  std::fprintf(stderr, "weir-sim: %s\n", what.c_str());
  return exit_usage;
}

} // namespace

int main(int argc, char** argv) {
  cxxopts::Options cli{"weir-sim",
                       "Simulated weir clusters on virtual time, one per "
                       "seed, with seeded faults and invariant checks "
                       "(docs/simulation.md)"};
  cli.add_options()
    ("seed", "run this seed", cxxopts::value<std::string>())
    ("seeds", "run seeds A-B (inclusive), or a list: 3,10-20",
     cxxopts::value<std::string>())
    ("taskmanagers", "taskmanagers per cluster",
     cxxopts::value<int>()->default_value("4"))
    ("slots", "slots per taskmanager", cxxopts::value<int>()->default_value("4"))
    ("jobs", "jobs per run", cxxopts::value<int>()->default_value("4"))
    ("rows", "each job counts 1..N, N up to this",
     cxxopts::value<int64_t>()->default_value("5000"))
    ("jobs-of", "the jobs: all (every second one a keyed sum) or numbers "
     "(each collects 1..N)",
     cxxopts::value<std::string>()->default_value("all"))
    ("faults",
     "fault kinds: all (every kind but loss), none, or a list of crash-tm, "
     "crash-jm, hang, partition, loss, delay, skew, storage",
     cxxopts::value<std::string>()->default_value("all"))
    ("fault-count", "faults per run", cxxopts::value<int>()->default_value("6"))
    ("fault-window-ms", "faults start within this virtual time",
     cxxopts::value<int64_t>()->default_value("20000"))
    ("liveness-ms", "jobs end within this virtual time after the last fault",
     cxxopts::value<int64_t>()->default_value("120000"))
    ("connection-timeout-ms",
     "partitions last at most this long, as connections outlive no longer "
     "one (0: up to 8 s, held throughout)",
     cxxopts::value<int64_t>()->default_value("3000"))
    ("stats", "per seed: messages, virtual time, control-plane cost, and "
     "the faults")
    ("replay-check", "run each seed twice: the traces must be the same")
    ("log", "the cluster's event log on stderr (for replaying one seed)")
    ("trace", "every message delivered, on stderr (for replaying one seed)")
    ("h,help", "this help");
  cxxopts::ParseResult args;
  try {
    args = cli.parse(argc, argv);
  } catch (const std::exception& e) {
    return usage_error(e.what());
  }
  if (args.count("help")) {
    std::printf("%s\n", cli.help().c_str());
    return 0;
  }
  if (args.unmatched().size() > 0)
    return usage_error("unexpected argument '" + args.unmatched()[0] + "'");
  run_options opts;
  std::vector<seed_range> seeds{seed_range{}};
  if (args.count("seed") && args.count("seeds"))
    return usage_error("--seed and --seeds: give one of them");
  if (args.count("seed")) {
    auto text = args["seed"].as<std::string>();
    if (text.empty() || text.size() > 19
        || text.find_first_not_of("0123456789") != std::string::npos)
      return usage_error("--seed: '" + text + "' is not a seed (0 or more)");
    seeds[0].first = seeds[0].last = std::stoull(text);
  } else if (args.count("seeds"))
    if (auto err = parse_seeds(args["seeds"].as<std::string>(), seeds);
        !err.empty())
      return usage_error(err);
  opts.taskmanagers = args["taskmanagers"].as<int>();
  opts.slots = args["slots"].as<int>();
  opts.jobs = args["jobs"].as<int>();
  opts.max_rows = args["rows"].as<int64_t>();
  opts.fault_count = args["fault-count"].as<int>();
  auto window = args["fault-window-ms"].as<int64_t>();
  auto liveness = args["liveness-ms"].as<int64_t>();
  if (opts.taskmanagers < 1 || opts.taskmanagers > 100000)
    return usage_error("--taskmanagers: must be 1..100000");
  if (opts.slots < 1 || opts.slots > 1024)
    return usage_error("--slots: must be 1..1024");
  if (opts.jobs < 0 || opts.jobs > 100000)
    return usage_error("--jobs: must be 0..100000");
  if (opts.max_rows < 100 || opts.max_rows > 100'000'000)
    return usage_error("--rows: must be 100..100000000");
  if (opts.fault_count < 0 || opts.fault_count > 10000)
    return usage_error("--fault-count: must be 0..10000");
  if (window < 1 || window > 86'400'000)
    return usage_error("--fault-window-ms: must be 1..86400000");
  if (liveness < 1 || liveness > 86'400'000)
    return usage_error("--liveness-ms: must be 1..86400000");
  auto connection = args["connection-timeout-ms"].as<int64_t>();
  if (connection < 0 || connection > 86'400'000)
    return usage_error("--connection-timeout-ms: must be 0..86400000");
  opts.connection_timeout = std::chrono::milliseconds{connection};
  opts.fault_window = std::chrono::milliseconds{window};
  opts.liveness = std::chrono::milliseconds{liveness};
  auto fault_text = args["faults"].as<std::string>();
  if (auto err = parse_fault_mix(fault_text, opts.faults); !err.empty())
    return usage_error(err);
  auto jobs_of = args["jobs-of"].as<std::string>();
  if (jobs_of != "all" && jobs_of != "numbers")
    return usage_error("--jobs-of: '" + jobs_of + "' is neither all nor numbers");
  opts.sum_jobs = jobs_of == "all";
  opts.log = args.count("log") > 0;
  opts.trace = args.count("trace") > 0;
  bool stats = args.count("stats") > 0;
  bool replay_check = args.count("replay-check") > 0;
  uint64_t ran = 0;
  uint64_t failed = 0;
  auto run_one = [&](uint64_t s) {
    opts.seed = s;
    auto began = std::chrono::steady_clock::now();
    auto out = run_simulation(opts);
    auto real_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - began)
                     .count();
    if (replay_check) {
      auto again = run_simulation(opts);
      if (again.trace != out.trace)
        out.broken.push_back(fmt::format(
          "determinism: the replay's trace is {:016x}, not {:016x}",
          again.trace, out.trace));
    }
    ++ran;
    std::printf("seed %llu trace %016llx\n", static_cast<unsigned long long>(s),
                static_cast<unsigned long long>(out.trace));
    if (stats)
      std::printf("  %llu messages, %.1f s virtual in %lld ms real, %d/%d jobs "
                  "ended; per taskmanager per virtual second: %.2f "
                  "TaskExecutor messages (%.2f heartbeats)\n",
                  static_cast<unsigned long long>(out.deliveries),
                  std::chrono::duration<double>(out.virtual_time).count(),
                  static_cast<long long>(real_ms), out.jobs_finished, opts.jobs,
                  out.te_messages_per_second, out.heartbeats_per_second);
    if (!out.broken.empty() || stats) {
      for (auto& b : out.broken)
        std::printf("  BROKEN %s\n", b.c_str());
      for (auto& f : out.faults)
        std::printf("  fault: %s\n", f.c_str());
    }
    if (!out.broken.empty()) {
      ++failed;
      std::printf("  replay: %s\n",
                  replay_command(opts, s, fault_text).c_str());
    }
    std::fflush(stdout);
  };
  for (auto& r : seeds)
    for (uint64_t s = r.first;; ++s) {
      run_one(s);
      if (s == r.last)
        break;
    }
  if (ran > 1)
    std::printf("%llu of %llu seeds broke an invariant\n",
                static_cast<unsigned long long>(failed),
                static_cast<unsigned long long>(ran));
  return failed > 0 ? exit_broken : 0;
}
