#pragma once

// A client of a cluster whose leader etcd names (-m etcd://...): every
// request rides a leader change (docs/operations.md § Client API).

#include <chrono>
#include <functional>
#include <memory>
#include <string>

#include "client/job_client.hpp"
#include "client/job_service.hpp"
#include "ha/rest_target.hpp"

namespace weir {

/// A job_service on the REST API of `t`'s current leader. A request that
/// cannot reach the leader, or finds none, waits for the next one (up to
/// `patience`, or Ctrl-C), saying so through `note`, and is then sent
/// there; after `patience` it fails with the last error. A submission
/// keeps its job id, so one sent twice runs once.
class leader_jobs : public client::job_service {
public:
  using note_fn = std::function<void(const std::string&)>;

  leader_jobs(rest_target t, std::chrono::milliseconds patience, note_fn note);
  ~leader_jobs() override;

  [[nodiscard]] caf::expected<std::vector<job_status>> list() override;
  [[nodiscard]] caf::expected<job_status> status(const job_id& id, bool detailed) override;
  [[nodiscard]] caf::expected<cancel_outcome> cancel(const job_id& id) override;
  [[nodiscard]] caf::expected<int64_t> checkpoint(const job_id& id, bool full) override;
  [[nodiscard]] caf::expected<std::string> savepoint(const job_id& id, const std::string& dir,
                                       savepoint_mode mode) override;
  [[nodiscard]] caf::expected<int32_t> rescale(const job_id& id,
                                               int32_t parallelism) override;
  [[nodiscard]] caf::expected<std::vector<collected_table>> collect(const job_id& id,
                                             int64_t offset) override;
  [[nodiscard]] caf::expected<std::optional<job_result>>
  await_result(const job_id& id, std::chrono::milliseconds patience) override;
  [[nodiscard]] caf::error put_blob(const std::string& hash, std::string bytes) override;
  [[nodiscard]] caf::expected<job_id> submit(const job_graph& g) override;

private:
  /// `request(leader)` on the current leader, again on the next one while
  /// the leader is lost.
  template <class F>
  auto on_leader(F request) -> decltype(request(
    std::declval<client::job_service&>()));

  /// Waits for a leader that answers, other than the one lost with `why`
  /// (none: the first look-up); an error once patience is exhausted.
  [[nodiscard]] caf::error find_leader(const caf::error& why);

  rest_target target_;
  std::chrono::milliseconds patience_;
  note_fn note_;
  std::unique_ptr<client::job_client> leader_;
  std::string leader_url_;
};

/// A client of what `address` names (as -m takes it): a fixed REST API,
/// the first answering of several, or leader_jobs for etcd://, whose
/// patience is client.leader-wait. One-line errors as
/// resolve_rest_target's.
[[nodiscard]] caf::expected<std::unique_ptr<client::job_service>>
connect_jobs(const std::string& address, const configuration& cfg,
             leader_jobs::note_fn note);

} // namespace weir
