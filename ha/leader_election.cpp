#include "ha/leader_election.hpp"

#include <algorithm>

#include <time.h>

#include <fmt/format.h>

#include "ha/gateway.hpp"
#include "config/config.hpp"
#include "config/keys.hpp"
#include "messages/errors.hpp"

namespace weir {

namespace {

using namespace std::chrono_literals;
using clock = std::chrono::steady_clock;

/// Nanoseconds of CLOCK_BOOTTIME: unlike the steady clock it goes on while
/// the machine is suspended, so a lease's end is never seen late.
/// Async-signal-safe.
int64_t boot_ns() noexcept {
  timespec ts{};
  ::clock_gettime(CLOCK_BOOTTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

int64_t ns(std::chrono::nanoseconds d) {
  return d.count();
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

/// The etcd members of `text`: "HOST:PORT" or etcd's own form of a client
/// URL, "http://HOST:PORT" (what etcdctl takes), comma-separated; an error
/// naming the key, the value and the form expected otherwise. etcd over
/// TLS (https://) is not supported yet.
caf::expected<std::vector<std::string>> etcd_members(const std::string& text) {
  std::vector<std::string> out;
  auto refuse = [&](const std::string& why) {
    return make_error(errc::invalid_config,
                      fmt::format("{}: '{}' {} (expected HOST:PORT or "
                                  "http://HOST:PORT, comma-separated)",
                                  keys::ha_etcd_endpoints.name, text, why));
  };
  size_t start = 0;
  for (;;) {
    auto comma = text.find(',', start);
    auto item = text.substr(start, comma == std::string::npos
                                     ? std::string::npos
                                     : comma - start);
    if (item.rfind("http://", 0) == 0) {
      item.erase(0, 7);
      if (!item.empty() && item.back() == '/')
        item.pop_back();
    } else if (item.rfind("https://", 0) == 0) {
      return refuse("uses https://: etcd over TLS is not supported yet");
    }
    if (item.find("://") != std::string::npos)
      return refuse("has a scheme other than http://");
    auto ep = parse_endpoint(item);
    if (!ep || ep->host.find('/') != std::string::npos)
      return refuse("is not a list of etcd client addresses");
    out.push_back(fmt::format("{}:{}", ep->host, ep->port));
    if (comma == std::string::npos)
      return out;
    start = comma + 1;
  }
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
  auto members = etcd_members(text);
  if (!members)
    return members.error();
  o.endpoints = std::move(*members);
  // It names etcd keys and a directory: nothing that nests or escapes.
  auto& id = o.cluster_id;
  auto bad = id.empty() || id[0] == '.'
             || id.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                     "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
                  != std::string::npos;
  if (bad)
    return make_error(errc::invalid_config,
                      fmt::format("{}: '{}' cannot name a cluster in etcd "
                                  "(letters, digits, '.', '_' and '-', not "
                                  "starting with '.')",
                                  keys::cluster_id.name, id));
  return std::optional<etcd_ha_options>{std::move(o)};
}

std::string leader_key(const std::string& cluster_id) {
  return "/weir/" + cluster_id + "/leader";
}

std::string rest_leader_key(const std::string& cluster_id) {
  return "/weir/" + cluster_id + "/leader-rest";
}

std::string store_prefix(const std::string& cluster_id) {
  return "/weir/" + cluster_id + "/store/";
}

caf::expected<std::string> find_leader(ha::etcd_client& etcd,
                                       const std::string& cluster_id) {
  auto found = etcd.range(leader_key(cluster_id));
  if (!found)
    return found.error();
  return found->empty() ? std::string{} : found->front().value;
}

caf::expected<std::string> find_rest_leader(ha::etcd_client& etcd,
                                            const std::string& cluster_id) {
  auto found = etcd.range(rest_leader_key(cluster_id));
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
  // Store requests get a third of the lease, within 0.5 to 10 s: less would
  // fail writes on a busy etcd; more would outlive the lease, or the
  // Dispatcher's patience with its store.
  auto etcd = std::make_shared<ha::etcd_client>(
    opts.endpoints,
    std::chrono::milliseconds{std::clamp<int64_t>(ttl * 1000 / 3, 500, 10000)});
  auto key = leader_key(opts.cluster_id);
  int64_t lease = 0;
  std::string last;
  auto note = [&](std::string line) {
    if (line != last)
      standby(line);
    last = std::move(line);
  };
  while (!stop()) {
    auto sent = boot_ns();
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
    auto won = etcd->txn({ha::etcd_condition{key, 0}},
                         {ha::etcd_op{ha::etcd_op::put, key, "",
                                           lease}},
                         {ha::etcd_op{ha::etcd_op::get, key}});
    if (!won) {
      note(describe(won.error()));
    } else if (won->succeeded) {
      return std::unique_ptr<leadership>{new leadership(
        opts, etcd, lease, ttl, sent, ha::etcd_fence{key, won->revision})};
    } else if (auto& now = won->reads.front();
               !now.empty() && now.front().lease == lease) {
      // An earlier attempt was applied but not answered: the key is ours.
      return std::unique_ptr<leadership>{new leadership(
        opts, etcd, lease, ttl, sent,
        ha::etcd_fence{key, now.front().create_revision})};
    } else {
      auto leader = now.empty() ? std::string{} : now.front().value;
      note(leader.empty() ? "another jobmanager leads (it is starting)"
                          : fmt::format("the jobmanager at {} leads", leader));
    }
    pause(opts.retry, stop);
  }
  // Best effort: a lease that is not revoked expires within its TTL.
  if (lease != 0)
    static_cast<void>(etcd->revoke(lease));
  return nullptr;
}

leadership::leadership(const etcd_ha_options& opts,
                       std::shared_ptr<ha::etcd_client> etcd,
                       int64_t lease, int64_t ttl_seconds, int64_t sent,
                       ha::etcd_fence fence)
  : opts_(opts),
    etcd_(std::move(etcd)),
    lease_(lease),
    ttl_(ttl_seconds),
    fence_(std::move(fence)),
    deadline_(sent + ns(ttl_ - margin_of(ttl_))) {
}

leadership::~leadership() {
  stopping_ = true;
  if (keeper_.joinable())
    keeper_.join();
  if (watchdog_.joinable())
    watchdog_.join();
  // A standby takes over at once; should the revoke fail, once the lease
  // expired.
  if (!ended_)
    static_cast<void>(etcd_->revoke(lease_));
}

caf::error leadership::publish(const std::string& address,
                               const std::string& rest_url) {
  // The REST key lives on the same lease: it goes when the leader does.
  // It is written first in the transaction's order, so that a client who
  // finds the leader key finds the REST key of the same leader.
  std::vector<ha::etcd_op> ops;
  auto rest_key = rest_leader_key(opts_.cluster_id);
  if (rest_url.empty())
    ops.push_back(ha::etcd_op{ha::etcd_op::remove, rest_key, "", 0});
  else
    ops.push_back(
      ha::etcd_op{ha::etcd_op::put, rest_key, rest_url, lease_});
  ops.push_back(
    ha::etcd_op{ha::etcd_op::put, fence_.key, address, lease_});
  auto done = etcd_->txn({ha::etcd_condition{fence_.key, fence_.revision}},
                         std::move(ops));
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
  return boot_ns() >= deadline_.load();
}

void leadership::end(const std::string& why) {
  if (ended_.exchange(true))
    return;
  lost_(why);
}

void leadership::renew_lease() {
  auto stop = [this] { return stopping_.load() || ended_.load(); };
  // Every third of the lease, the first at once; after a failure again
  // soon, until the watchdog's deadline. Each request gets a sixth of the
  // lease, so several fit before it. Its own client: a renewal never waits
  // behind a store request.
  auto period = std::chrono::milliseconds{ttl_} / 3;
  ha::etcd_client etcd{opts_.endpoints,
                            std::max<std::chrono::milliseconds>(period / 2,
                                                                100ms)};
  auto next = clock::now();
  while (!stop()) {
    pause(next - clock::now(), stop);
    if (stop())
      return;
    auto sent = boot_ns();
    auto left = etcd.keep_alive(lease_);
    if (left && *left <= 0) {
      end(fmt::format("etcd ended its lease of {}", fence_.key));
      return;
    }
    if (!left) {
      next = clock::now() + 100ms;
      continue;
    }
    deadline_ = sent + ns(std::chrono::seconds{*left} - margin_of(ttl_));
    // The key itself may be gone while the lease lives (removed by hand):
    // then another may lead already.
    auto key = etcd.range(fence_.key);
    if (key && (key->empty() || key->front().create_revision != fence_.revision)) {
      end(fmt::format("the leader key {} was removed or replaced",
                      fence_.key));
      return;
    }
    next = clock::now() + period;
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
