#include "sim/faults.hpp"

#include <algorithm>
#include <sstream>

#include <fmt/format.h>

namespace weir::sim {

namespace {

using namespace std::chrono_literals;

duration between(std::mt19937_64& rng, duration lo, duration hi) {
  std::uniform_int_distribution<int64_t> d{lo.count(), hi.count()};
  return duration{d(rng)};
}

} // namespace

const std::vector<std::pair<std::string, fault_kind>>& fault_names() {
  static const std::vector<std::pair<std::string, fault_kind>> names{
    {"crash-tm", fault_kind::crash_taskmanager},
    {"crash-jm", fault_kind::crash_jobmanager},
    {"hang", fault_kind::hang},
    {"partition", fault_kind::partition},
    {"loss", fault_kind::loss},
    {"delay", fault_kind::delay},
    {"skew", fault_kind::skew},
    {"storage", fault_kind::storage},
    {"failover", fault_kind::failover},
    {"failover-freeze", fault_kind::failover_freeze},
  };
  return names;
}

std::string parse_fault_mix(const std::string& text, std::set<fault_kind>& out) {
  out.clear();
  std::stringstream in{text};
  std::string name;
  while (std::getline(in, name, ',')) {
    if (name.empty() || name == "none")
      continue;
    if (name == "all") {
      for (auto& [n, k] : fault_names())
        if (k != fault_kind::loss)
          out.insert(k);
      continue;
    }
    auto i = std::find_if(fault_names().begin(), fault_names().end(),
                          [&](auto& p) { return p.first == name; });
    if (i == fault_names().end()) {
      std::string known;
      for (auto& [n, k] : fault_names())
        known += (known.empty() ? "" : ", ") + n;
      return fmt::format("--faults: unknown fault '{}' (known: all, none, {})",
                         name, known);
    }
    out.insert(i->second);
  }
  return {};
}

std::vector<fault> plan_faults(std::mt19937_64& rng,
                               const std::set<fault_kind>& mix, int count,
                               duration window, int taskmanagers) {
  std::vector<fault> out;
  if (mix.empty() || taskmanagers < 1)
    return out;
  std::vector<fault_kind> kinds(mix.begin(), mix.end());
  std::uniform_int_distribution<size_t> pick_kind{0, kinds.size() - 1};
  std::uniform_int_distribution<int> pick_tm{1, taskmanagers};
  for (int i = 0; i < count; ++i) {
    fault f;
    f.kind = kinds[pick_kind(rng)];
    f.at = between(rng, 500ms, window);
    switch (f.kind) {
      case fault_kind::crash_taskmanager:
        f.nodes = {pick_tm(rng)};
        f.lasts = between(rng, 100ms, 5s);
        break;
      case fault_kind::crash_jobmanager:
        f.nodes = {0};
        f.lasts = between(rng, 100ms, 3s);
        break;
      case fault_kind::hang:
        // Sometimes shorter than the heartbeat timeout (3 s), sometimes not.
        f.nodes = {static_cast<int>(rng() % 4 == 0 ? 0 : pick_tm(rng))};
        f.lasts = between(rng, 200ms, 8s);
        break;
      case fault_kind::partition: {
        // Some taskmanagers away from the jobmanager and the others.
        int n = 1 + static_cast<int>(rng() % std::max(1, taskmanagers / 2));
        std::set<int> side;
        while (static_cast<int>(side.size()) < n)
          side.insert(pick_tm(rng));
        f.nodes.assign(side.begin(), side.end());
        f.lasts = between(rng, 100ms, 8s);
        break;
      }
      case fault_kind::loss:
        f.nodes = {0, pick_tm(rng)};
        f.lasts = between(rng, 10ms, 500ms);
        break;
      case fault_kind::delay:
        f.nodes = {0, pick_tm(rng)};
        f.lasts = between(rng, 500ms, 5s);
        f.amount = between(rng, 5ms, 800ms);
        break;
      case fault_kind::skew:
        f.nodes = {static_cast<int>(rng() % 3 == 0 ? 0 : pick_tm(rng))};
        f.lasts = between(rng, 500ms, 5s);
        f.amount = between(rng, 10ms, 1500ms);
        break;
      case fault_kind::storage:
        f.nodes = {0};
        f.lasts = between(rng, 100ms, 3s);
        break;
      case fault_kind::failover:
        // Past the lease (3 s): a standby leads; the old leader, stopped
        // by a signal, exits the moment it continues.
        f.nodes = {0};
        f.lasts = between(rng, 3500ms, 10s);
        break;
      case fault_kind::failover_freeze:
        // Frozen without a signal: its watchdog sees it within 20 ms of
        // running again (docs/deployment.md § etcd, Fencing).
        f.nodes = {0};
        f.lasts = between(rng, 3500ms, 10s);
        f.amount = between(rng, 1ms, 20ms);
        break;
    }
    out.push_back(std::move(f));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const fault& x, const fault& y) { return x.at < y.at; });
  return out;
}

std::string describe(const fault& f) {
  std::string what;
  for (auto& [n, k] : fault_names())
    if (k == f.kind)
      what = n;
  std::string nodes;
  for (auto n : f.nodes)
    nodes += (nodes.empty() ? "" : ",")
             + (n == 0 ? std::string{"jm"} : "tm-" + std::to_string(n));
  auto text = fmt::format("{} {} at {} ms for {} ms", what, nodes, ms(f.at),
                          ms(f.lasts));
  if (f.amount.count() > 0)
    text += fmt::format(" ({} ms)", ms(f.amount));
  return text;
}

} // namespace weir::sim
