#pragma once

// What a client asks of a cluster's Dispatcher, however it reaches it: a
// session cluster's over the REST API (job_client), a cluster in this
// process directly (dispatcher_jobs). The CLI's wait, submit and job
// actions are written once against this.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "messages/barrier.hpp"
#include "messages/job_graph.hpp"
#include "messages/job_result.hpp"

namespace weir::client {

class job_service {
public:
  virtual ~job_service() = default;

  [[nodiscard]] virtual caf::expected<std::vector<job_status>> list() = 0;
  /// With every subtask if `detailed` (and the job still runs).
  [[nodiscard]] virtual caf::expected<job_status> status(const job_id& id,
                                           bool detailed) = 0;
  /// The job's state before and after the request.
  [[nodiscard]] virtual caf::expected<cancel_outcome> cancel(const job_id& id) = 0;
  /// A checkpoint now (a full one if `full`); its id once completed.
  [[nodiscard]] virtual caf::expected<int64_t> checkpoint(const job_id& id, bool full) = 0;
  /// A savepoint into `dir` (absolute), then the job stops or not as
  /// `mode` says; its path.
  [[nodiscard]] virtual caf::expected<std::string>
  savepoint(const job_id& id, const std::string& dir, savepoint_mode mode) = 0;
  /// Runs every vertex of the job at `parallelism`, in place (from a
  /// checkpoint taken now); `parallelism` once every subtask runs at it.
  [[nodiscard]] virtual caf::expected<int32_t> rescale(const job_id& id,
                                                       int32_t parallelism) = 0;
  /// What the job's collect sinks gathered, from the `offset`-th record on
  /// (a bounded part each time).
  [[nodiscard]] virtual caf::expected<std::vector<collected_table>> collect(const job_id& id,
                                                     int64_t offset) = 0;
  /// The job's result if it ends within `patience`; nothing if it still
  /// runs then.
  [[nodiscard]] virtual caf::expected<std::optional<job_result>>
  await_result(const job_id& id, std::chrono::milliseconds patience) = 0;
  /// Stores a user library or file of a job about to be submitted.
  [[nodiscard]] virtual caf::error put_blob(const std::string& hash, std::string bytes) = 0;
  /// Submits `g` (its blobs put first); its id once stored.
  [[nodiscard]] virtual caf::expected<job_id> submit(const job_graph& g) = 0;
};

} // namespace weir::client
