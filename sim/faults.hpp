#pragma once

// The faults of one run (docs/simulation.md § Faults), drawn from its seed
// before it starts: what happens to which node, when, for how long. A plain
// plan; the cluster applies it.

#include <random>
#include <set>
#include <string>
#include <vector>

#include "sim/world.hpp"

namespace weir::sim {

enum class fault_kind {
  crash_taskmanager, ///< kill -9, restarted later with its storage
  crash_jobmanager,  ///< the same for the jobmanager (job store kept)
  hang,              ///< a process that stops, then goes on
  partition,         ///< some taskmanagers cut off, messages held
  loss,              ///< messages dropped without notice (adversarial)
  delay,             ///< a slow link
  skew,              ///< a node whose clock (its timers) lags
  storage,           ///< the job store fails writes
  failover,          ///< the leader stops past its lease; a standby leads
  failover_freeze,   ///< the same, and the old one runs 20 ms on resuming
};

/// The kinds by name: crash-tm, crash-jm, hang, partition, loss, delay,
/// skew, storage, failover, failover-freeze.
const std::vector<std::pair<std::string, fault_kind>>& fault_names();

/// "crash-tm,hang" or "all" (every kind but the adversarial one, loss)
/// into a set; an unknown
/// name is an error naming it.
[[nodiscard]] std::string parse_fault_mix(const std::string& text,
                                          std::set<fault_kind>& out);

struct fault {
  duration at;       ///< since the world began
  duration lasts;    ///< until the restart, resume or heal
  fault_kind kind;
  std::vector<int> nodes; ///< taskmanager nodes (1..N); 0: the jobmanager
  duration amount{0};     ///< a delay's or lag's size
};

/// `count` faults of the kinds in `mix`, spread over `window`, on a
/// jobmanager (node 0) and taskmanagers 1..`taskmanagers`.
std::vector<fault> plan_faults(std::mt19937_64& rng,
                               const std::set<fault_kind>& mix, int count,
                               duration window, int taskmanagers);

std::string describe(const fault& f);

} // namespace weir::sim
