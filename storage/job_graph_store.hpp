#pragma once

#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "messages/ids.hpp"
#include "messages/job_graph.hpp"
#include "messages/job_store.hpp"
#include "storage/kv_store.hpp"

namespace weir::storage {

/// What job_graph_store::load_all found.
struct stored_graphs {
  /// Every readable graph, in job id order.
  std::vector<job_graph> graphs;
  /// One line per skipped record: `job_graphs/<key>: <reason>`.
  std::vector<std::string> problems;
  /// The skipped records whose key is a job id: jobs that cannot be
  /// recovered, each with its line.
  std::vector<unreadable_job> unreadable;
};

/// The submitted JobGraphs of a cluster: one JSON record per job in column
/// `job_graphs`, keyed by the job id's hex form. Every write is synced, so the
/// Dispatcher may acknowledge a submission as soon as `put` returns.
/// A record that cannot be read (bad JSON, unknown format_version, missing
/// field, bad key, key not matching the id inside, malformed graph) is an
/// error naming its key from `get` and a skipped problem in `load_all`.
/// A hash of the graph's stored form without what the planner derives (the
/// vertices' output schemas, a hash edge's default key ["key"]): equal
/// graphs, equal fingerprints, and a result stored before rows matches the
/// same graph submitted since (its schemas derived).
uint64_t job_graph_fingerprint(const job_graph& g);

class job_graph_store {
public:
  /// A table over `kv`, which must outlive it.
  explicit job_graph_store(kv_store& kv) : kv_(kv) {}

  /// Stores `g` under its id, replacing an earlier record (synced).
  [[nodiscard]] caf::error put(const job_graph& g);

  /// Removes the graph of job `id`; no error when none is stored (synced).
  [[nodiscard]] caf::error remove(job_id id);

  /// The graph of job `id`, or nothing when none is stored.
  [[nodiscard]] caf::expected<std::optional<job_graph>> get(job_id id);

  /// Every stored graph; fails only when the store itself fails.
  [[nodiscard]] caf::expected<stored_graphs> load_all();

private:
  kv_store& kv_;
};

} // namespace weir::storage
