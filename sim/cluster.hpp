#pragma once

// One simulated run (docs/simulation.md): a jobmanager, taskmanagers and a
// client on their own nodes, jobs submitted and their results checked,
// faults from the seed applied, invariants checked throughout.

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "sim/faults.hpp"

namespace weir::sim {

struct run_options {
  uint64_t seed = 1;
  int taskmanagers = 4;
  int slots = 4;
  int jobs = 4;
  /// Each job counts 1..N, N drawn up to this.
  int64_t max_rows = 5000;
  /// Every second job sums the numbers by key (value mod K) rather than
  /// collecting them: keyed state and a hash exchange.
  bool sum_jobs = true;
  std::set<fault_kind> faults;
  int fault_count = 6;
  /// Faults start within this much virtual time.
  duration fault_window{std::chrono::seconds{20}};
  /// Every job ends within this much virtual time after the last fault.
  duration liveness{std::chrono::seconds{120}};
  /// Partitions last at most this long: TCP holds what crosses one, and
  /// CAF drops a connection silent for middleman.connection-timeout, which
  /// weir sets to heartbeat.timeout (3 s here). A longer one needs CAF's
  /// down notifications of a broken connection, which the world does not
  /// make. 0: partitions last as drawn (up to 8 s), held throughout.
  duration connection_timeout{std::chrono::seconds{3}};
  /// The jobmanager's and taskmanagers' event logs on stderr.
  bool log = false;
  /// Every delivery on stderr: virtual time, sender, receiver, message.
  bool trace = false;
};

struct run_outcome {
  uint64_t trace = 0;
  uint64_t deliveries = 0;
  duration virtual_time{0};
  /// Messages to and from TaskExecutors per virtual second per taskmanager,
  /// and the heartbeats among them.
  double te_messages_per_second = 0;
  double heartbeats_per_second = 0;
  int jobs_finished = 0;
  std::vector<std::string> faults; ///< what the seed did
  std::vector<std::string> broken; ///< empty: every invariant held
};

run_outcome run_simulation(const run_options& opts);

} // namespace weir::sim
