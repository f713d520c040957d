#pragma once

// job_service for a cluster in this process (`weir run` without -m, an
// embedded cluster): the Dispatcher's typed requests, sent directly.

#include <memory>

#include <caf/actor.hpp>

#include "client/job_service.hpp"
#include "messages/dispatcher.hpp"

namespace caf {
class actor_system;
class scoped_actor;
} // namespace caf

namespace weir::client {

class dispatcher_jobs : public job_service {
public:
  dispatcher_jobs(caf::actor_system& sys, dispatcher_actor dispatcher);
  ~dispatcher_jobs() override;

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
  /// Waits for the Dispatcher's answer: it comes the moment the job ends.
  /// A Dispatcher that goes down first (a remote one whose process died)
  /// is `errc::peer_lost`.
  [[nodiscard]] caf::expected<std::optional<job_result>>
  await_result(const job_id& id, std::chrono::milliseconds patience) override;
  [[nodiscard]] caf::error put_blob(const std::string& hash, std::string bytes) override;
  [[nodiscard]] caf::expected<job_id> submit(const job_graph& g) override;

private:
  template <class T, class... Ts>
  [[nodiscard]] caf::expected<T> ask(caf::timespan timeout, Ts&&... xs);

  dispatcher_actor dispatcher_;
  /// One actor for every request: the Dispatcher keeps one result waiter
  /// per client actor, so repeated waits replace each other.
  std::unique_ptr<caf::scoped_actor> self_;
  /// The actor waiting for job `fetched_`'s result (none before the first
  /// await_result and after an answer).
  caf::actor fetcher_;
  job_id fetched_;
};

} // namespace weir::client
