#pragma once

// The Dispatcher's client requests over the REST API (weir's client API,
// rest/routes/client.cpp): one call each, blocking, for the CLI's
// and a host program's own threads. Errors keep weir's codes (an unknown
// job is errc::unknown_job, a lost jobmanager errc::peer_lost).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "client/job_service.hpp"
#include "client/rest_connection.hpp"
#include "messages/job_graph.hpp"
#include "messages/job_result.hpp"

namespace weir::client {

class job_client : public job_service {
public:
  explicit job_client(rest_endpoint at);

  [[nodiscard]] caf::expected<std::vector<job_status>> list() override;
  [[nodiscard]] caf::expected<job_status> status(const job_id& id, bool detailed) override;
  [[nodiscard]] caf::expected<cancel_outcome> cancel(const job_id& id) override;
  [[nodiscard]] caf::expected<int64_t> checkpoint(const job_id& id, bool full) override;
  [[nodiscard]] caf::expected<std::string> savepoint(const job_id& id,
                                       const std::string& dir,
                                       savepoint_mode mode) override;
  [[nodiscard]] caf::expected<int32_t> rescale(const job_id& id,
                                               int32_t parallelism) override;
  [[nodiscard]] caf::expected<std::vector<collected_table>> collect(const job_id& id,
                                             int64_t offset) override;
  /// Polls: the REST API answers at once whether the job has ended (a
  /// request that waited would hold one of its threads).
  [[nodiscard]] caf::expected<std::optional<job_result>>
  await_result(const job_id& id, std::chrono::milliseconds patience) override;
  [[nodiscard]] caf::error put_blob(const std::string& hash, std::string bytes) override;
  [[nodiscard]] caf::expected<job_id> submit(const job_graph& g) override;

  /// The job's result once it has ended; nothing while it runs.
  [[nodiscard]] caf::expected<std::optional<job_result>> result(const job_id& id);

  const rest_endpoint& endpoint() const {
    return http_.endpoint();
  }

private:
  /// Starts an operation at `route` (a checkpoint, a savepoint) and polls
  /// it to its end; its result's text.
  [[nodiscard]] caf::expected<std::string> operation(const job_id& id, const char* route,
                                       const nlohmann::json& body);

  rest_connection http_;
  /// The job await_result polls, since when.
  job_id polled_;
  std::chrono::steady_clock::time_point polled_since_;
};

} // namespace weir::client
