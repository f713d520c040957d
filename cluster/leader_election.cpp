#include "cluster/leader_election.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "cluster/gateway.hpp"
#include "config/config.hpp"
#include "config/keys.hpp"
#include "messages/errors.hpp"

namespace weir {

namespace {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

int64_t ticks(clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
           t.time_since_epoch())
    .count();
}

/// Waits `d`, in slices of at most 20 ms, unless `stop()` says otherwise.
void pause(clock::duration d, const std::function<bool()>& stop) {
  auto until = clock::now() + d;
  while (!stop() && clock::now() < until)
    std::this_thread::sleep_for(std::min<clock::duration>(until - clock::now(),
                                                          20ms));
}

/// A lease's margin: the leader stops this long before etcd could let it
/// end, so a clock that runs a little fast or a slow last request never
/// lets two leaders overlap.
std::chrono::milliseconds margin_of(std::chrono::milliseconds ttl) {
  return std::max<std::chrono::milliseconds>(ttl / 4, 500ms);
}

} // namespace

caf::expected<std::optional<etcd_ha_options>>
etcd_ha_options::from(const configuration& cfg) {
  auto type = cfg.get(keys::ha_type);
  if (type == "none" || type == "NONE")
    return std::optional<etcd_ha_options>{};
  etcd_ha_options o;
  o.cluster_id = cfg.get(keys::cluster_id);
  o.lease_ttl = cfg.get(keys::ha_etcd_lease_ttl);
  o.retry = cfg.get(keys::ha_etcd_retry_period);
  auto text = cfg.get(keys::ha_etcd_endpoints);
  if (text.empty())
    return make_error(errc::invalid_config,
                      fmt::format("{}: etcd needs {} (HOST:PORT of etcd's "
                                  "client URLs)",
                                  keys::ha_type.name,
                                  keys::ha_etcd_endpoints.name));
  auto eps = parse_endpoints(text);
  if (!eps)
    return make_error(errc::invalid_config,
                      fmt::format("{}: '{}' is not HOST:PORT[,HOST:PORT...]",
                                  keys::ha_etcd_endpoints.name, text));
  for (auto& e : *eps)
    o.endpoints.push_back(fmt::format("{}:{}", e.host, e.port));
  return std::optional<etcd_ha_options>{std::move(o)};
}

std::string leader_key(const std::string& cluster_id) {
  return "/weir/" + cluster_id + "/leader";
}

std::string store_prefix(const std::string& cluster_id) {
  return "/weir/" + cluster_id + "/store/";
}

caf::expected<std::string> find_leader(storage::etcd_client& etcd,
                                       const std::string& cluster_id) {
  auto found = etcd.range(leader_key(cluster_id));
  if (!found)
    return found.error();
  return found->empty() ? std::string{} : found->front().value;
}

std::unique_ptr<leadership>
leadership::campaign(const etcd_ha_options& opts,
                     const std::function<bool()>& stop,
                     const std::function<void(const std::string&)>& standby) {
  auto ttl = std::max<int64_t>(
    2, std::chrono::duration_cast<std::chrono::seconds>(opts.lease_ttl + 999ms)
         .count());
  auto etcd = std::make_shared<storage::etcd_client>(
    opts.endpoints, std::chrono::milliseconds{std::max<int64_t>(
                      500, ttl * 1000 / 3)});
  auto key = leader_key(opts.cluster_id);
  int64_t lease = 0;
  std::string last;
  auto note = [&](std::string line) {
    if (line != last)
      standby(line);
    last = std::move(line);
  };
  while (!stop()) {
    auto sent = clock::now();
    // A standby's lease lives on while it waits: renew it, or take a new
    // one when it ended.
    if (lease != 0) {
      auto left = etcd->keep_alive(lease);
      if (!left || *left <= 0)
        lease = 0;
    }
    if (lease == 0) {
      auto granted = etcd->grant_lease(ttl);
      if (!granted) {
        note(describe(granted.error()));
        pause(opts.retry, stop);
        continue;
      }
      lease = *granted;
    }
    auto won = etcd->txn({storage::etcd_condition{key, 0}},
                         {storage::etcd_op{storage::etcd_op::put, key, "",
                                           lease, {}}},
                         {storage::etcd_op{storage::etcd_op::get, key, {}, 0,
                                           {}}});
    if (!won) {
      note(describe(won.error()));
    } else if (won->succeeded) {
      return std::unique_ptr<leadership>{new leadership(
        opts, etcd, lease, ttl, sent, storage::etcd_fence{key, won->revision})};
    } else {
      auto& now = won->reads.front();
      auto leader = now.empty() ? std::string{} : now.front().value;
      note(leader.empty() ? "another jobmanager leads (it is starting)"
                          : fmt::format("the jobmanager at {} leads", leader));
    }
    pause(opts.retry, stop);
  }
  if (lease != 0)
    etcd->revoke(lease);
  return nullptr;
}

leadership::leadership(const etcd_ha_options& opts,
                       std::shared_ptr<storage::etcd_client> etcd,
                       int64_t lease, int64_t ttl_seconds,
                       clock::time_point sent, storage::etcd_fence fence)
  : opts_(opts),
    etcd_(std::move(etcd)),
    lease_(lease),
    ttl_(ttl_seconds),
    fence_(std::move(fence)),
    deadline_(ticks(sent + ttl_ - margin_of(ttl_))) {
}

leadership::~leadership() {
  stopping_ = true;
  if (keeper_.joinable())
    keeper_.join();
  if (watchdog_.joinable())
    watchdog_.join();
  if (!ended_)
    etcd_->revoke(lease_); // a standby takes over at once
}

caf::error leadership::publish(const std::string& address) {
  auto done = etcd_->txn({storage::etcd_condition{fence_.key, fence_.revision}},
                         {storage::etcd_op{storage::etcd_op::put, fence_.key,
                                           address, lease_, {}}});
  if (!done)
    return done.error();
  if (!done->succeeded)
    return make_error(errc::storage_failure,
                      fmt::format("lost the leadership ({}) before publishing "
                                  "this jobmanager's address",
                                  fence_.key));
  return {};
}

void leadership::keep(std::function<void(const std::string&)> lost) {
  lost_ = std::move(lost);
  keeper_ = std::thread{[this] { renew_lease(); }};
  watchdog_ = std::thread{[this] { watch_deadline(); }};
}

bool leadership::expired() const noexcept {
  return ticks(clock::now()) >= deadline_.load();
}

void leadership::end(const std::string& why) {
  if (ended_.exchange(true))
    return;
  lost_(why);
}

void leadership::renew_lease() {
  auto stop = [this] { return stopping_.load() || ended_.load(); };
  // Every third of the lease; its own client: a renewal never waits behind
  // a store request.
  auto period = std::chrono::milliseconds{ttl_} / 3;
  storage::etcd_client etcd{opts_.endpoints, period};
  while (!stop()) {
    pause(period, stop);
    if (stop())
      return;
    auto sent = clock::now();
    auto left = etcd.keep_alive(lease_);
    if (left && *left > 0) {
      deadline_ = ticks(sent + std::chrono::seconds{*left} - margin_of(ttl_));
    } else if (left) {
      end(fmt::format("etcd ended its lease of {}", fence_.key));
      return;
    }
    // An error: the next renewal comes soon; the watchdog decides.
  }
}

void leadership::watch_deadline() {
  while (!stopping_ && !ended_) {
    if (expired()) {
      end(fmt::format("its lease of {} was not renewed in time ({} s, {} "
                      "at {})",
                      fence_.key, ttl_.count(), "etcd", etcd_->endpoints()));
      return;
    }
    std::this_thread::sleep_for(20ms);
  }
}

} // namespace weir
