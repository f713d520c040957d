#pragma once

#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "messages/ids.hpp"
#include "messages/job_result.hpp"
#include "storage/kv_store.hpp"

namespace weir::storage {

/// A stored job result and where its cleanup stands.
struct job_result_entry {
  job_result result;
  /// True until the job's cleanup (graph, checkpoints, blobs) is done.
  bool dirty = true;
};

bool operator==(const job_result_entry& a, const job_result_entry& b);

/// What job_result_store::load_all found.
struct stored_results {
  /// Every readable entry, in job id order.
  std::vector<job_result_entry> entries;
  /// One line per skipped record: `job_results/<key>: <reason>`.
  std::vector<std::string> problems;
};

/// Flink's JobResultStore: the results of globally terminated jobs in column
/// `job_results`, keyed by the job id's hex form. A result is written dirty
/// when the job ends, and marked clean once its cleanup is done; a job with a
/// stored result (dirty or clean) must never run again. Every write is synced.
/// Unreadable records are handled as in job_graph_store.
class job_result_store {
public:
  /// A table over `kv`, which must outlive it.
  explicit job_result_store(kv_store& kv) : kv_(kv) {}

  /// Stores `r` as dirty, replacing an earlier entry (synced).
  [[nodiscard]] caf::error put_dirty(const job_result& r);

  /// Stores `r` clean (synced), leaving the job's graph record as it is:
  /// a job whose graph cannot be read keeps it for an operator to inspect.
  [[nodiscard]] caf::error put_clean(const job_result& r);

  /// Marks the entry of job `id` clean (synced); `errc::unknown_job` when no
  /// entry is stored. Reads, then writes: one writer per store, please.
  [[nodiscard]] caf::error mark_clean(job_id id);

  /// The entry of job `id`, or nothing when none is stored.
  [[nodiscard]] caf::expected<std::optional<job_result_entry>> get(job_id id);

  /// Every stored entry; fails only when the store itself fails.
  [[nodiscard]] caf::expected<stored_results> load_all();

private:
  kv_store& kv_;
};

} // namespace weir::storage
