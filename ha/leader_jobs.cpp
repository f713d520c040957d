#include "ha/leader_jobs.hpp"

#include <thread>

#include <fmt/format.h>

#include "client/rest_connection.hpp"
#include "cluster/stop_signal.hpp"
#include "config/keys.hpp"
#include "messages/errors.hpp"

namespace weir {

namespace {

using namespace std::chrono_literals;

/// How long one etcd look-up or probe of a leader may take.
constexpr auto lookup_timeout = 2s;

/// How often a client without a leader asks etcd again.
constexpr auto lookup_interval = 200ms;

/// Whether `err` says the leader cannot be reached (rather than that it
/// refused the request).
bool leader_lost(const caf::error& err) {
  return err == make_error(errc::peer_lost);
}

/// Whole seconds, rounded up, for messages.
long long seconds_of(std::chrono::milliseconds d) {
  return (d.count() + 999) / 1000;
}

} // namespace

leader_jobs::leader_jobs(rest_target t, std::chrono::milliseconds patience,
                         note_fn note)
  : target_(std::move(t)), patience_(patience), note_(std::move(note)) {
  // Not asked yet: the first request looks the leader up.
}

leader_jobs::~leader_jobs() = default;

caf::error leader_jobs::find_leader(const caf::error& why) {
  auto lost = leader_url_;
  if (why)
    note_(fmt::format("lost the jobmanager at {} ({}); waiting up to {} s "
                      "for cluster {}'s next leader (client.leader-wait)",
                      lost, describe(why), seconds_of(patience_),
                      target_.cluster_id));
  leader_.reset();
  auto deadline = std::chrono::steady_clock::now() + patience_;
  bool said_none = false;
  caf::error last = why;
  for (;;) {
    auto at = current_rest_leader(target_, lookup_timeout);
    if (at && at->url() != lost) {
      // A leader's REST API serves once it leads; ask it before using it.
      client::rest_connection probe{*at};
      auto answer = probe.get("/config", lookup_timeout);
      if (answer && answer->ok()) {
        leader_ = std::make_unique<client::job_client>(*at);
        leader_url_ = at->url();
        if (why || said_none)
          note_(fmt::format("cluster {}'s leader is now {}",
                            target_.cluster_id, leader_url_));
        return caf::none;
      }
      last = answer ? make_error(errc::peer_lost,
                                 fmt::format("{} answered HTTP {}", at->url(),
                                             answer->status))
                    : answer.error();
    } else if (!at) {
      // etcd itself unreachable is not a leader change: said at once.
      if (at.error() == make_error(errc::storage_failure))
        return at.error();
      last = at.error();
      if (!why && !said_none) {
        said_none = true;
        note_(fmt::format("{}; waiting up to {} s for one "
                          "(client.leader-wait)",
                          describe(at.error()), seconds_of(patience_)));
      }
    }
    if (stop_requested() || std::chrono::steady_clock::now() >= deadline)
      return make_error(last ? static_cast<errc>(last.code()) : errc::timeout,
                        fmt::format("{} (waited {} s for a leader: "
                                    "client.leader-wait)",
                                    describe(last), seconds_of(patience_)));
    std::this_thread::sleep_for(lookup_interval);
  }
}

template <class F>
auto leader_jobs::on_leader(F request)
  -> decltype(request(std::declval<client::job_service&>())) {
  if (!leader_)
    if (auto err = find_leader(caf::error{}))
      return err;
  for (;;) {
    auto r = request(*leader_);
    if (r || !leader_lost(r.error()))
      return r;
    if (auto err = find_leader(r.error()))
      return err;
  }
}

caf::expected<std::vector<job_status>> leader_jobs::list() {
  return on_leader([](client::job_service& j) { return j.list(); });
}

caf::expected<job_status> leader_jobs::status(const job_id& id,
                                              bool detailed) {
  return on_leader(
    [&](client::job_service& j) { return j.status(id, detailed); });
}

caf::expected<cancel_outcome> leader_jobs::cancel(const job_id& id) {
  return on_leader([&](client::job_service& j) { return j.cancel(id); });
}

caf::expected<int64_t> leader_jobs::checkpoint(const job_id& id, bool full) {
  return on_leader(
    [&](client::job_service& j) { return j.checkpoint(id, full); });
}

caf::expected<std::string>
leader_jobs::savepoint(const job_id& id, const std::string& dir,
                       savepoint_mode mode) {
  return on_leader(
    [&](client::job_service& j) { return j.savepoint(id, dir, mode); });
}

caf::expected<int32_t> leader_jobs::rescale(const job_id& id,
                                            int32_t parallelism) {
  return on_leader(
    [&](client::job_service& j) { return j.rescale(id, parallelism); });
}

caf::expected<std::vector<collected_table>> leader_jobs::collect(const job_id& id,
                                                        int64_t offset) {
  return on_leader(
    [&](client::job_service& j) { return j.collect(id, offset); });
}

caf::expected<std::optional<job_result>>
leader_jobs::await_result(const job_id& id,
                          std::chrono::milliseconds patience) {
  return on_leader(
    [&](client::job_service& j) { return j.await_result(id, patience); });
}

caf::error leader_jobs::put_blob(const std::string& hash, std::string bytes) {
  auto r = on_leader([&](client::job_service& j) -> caf::expected<bool> {
    if (auto err = j.put_blob(hash, bytes))
      return err;
    return true;
  });
  return r ? caf::error{} : r.error();
}

caf::expected<job_id> leader_jobs::submit(const job_graph& g) {
  // One id for every attempt: a submission the lost leader stored is
  // attached to, not run twice.
  auto graph = g;
  if (!graph.id.valid())
    graph.id = job_id::random();
  return on_leader([&](client::job_service& j) { return j.submit(graph); });
}

caf::expected<std::unique_ptr<client::job_service>>
connect_jobs(const std::string& address, const configuration& cfg,
             leader_jobs::note_fn note) {
  auto target = resolve_rest_target(address, cfg);
  if (!target)
    return target.error();
  if (!target->etcd.empty())
    return std::make_unique<leader_jobs>(std::move(*target),
                                         cfg.get(keys::client_leader_wait),
                                         std::move(note));
  auto jobs = first_answering(*target);
  if (!jobs)
    return jobs.error();
  return std::unique_ptr<client::job_service>{std::move(*jobs)};
}

} // namespace weir
