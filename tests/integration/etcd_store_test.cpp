// The etcd pieces of high availability against a real etcd on loopback:
// the client, the store (files plus pointers, fenced by the leader key) and
// leader election. Skipped with a visible message without etcd
// (Debian's etcd-server).
#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "cluster/leader_election.hpp"
#include "messages/errors.hpp"
#include "process.hpp"
#include "storage/ha/etcd_store.hpp"

using namespace weir;
using namespace weir::storage;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

namespace fs = std::filesystem;

/// A one-member etcd on free loopback ports, with its data in `dir`.
struct etcd_server {
  temp_dir dir;
  std::unique_ptr<running_process> proc;
  std::string address;

  etcd_server() {
    if (::access("/usr/bin/etcd", X_OK) != 0)
      return;
    address = fmt::format("127.0.0.1:{}", free_port());
    auto url = "http://" + address;
    auto peer = fmt::format("http://127.0.0.1:{}", free_port());
    proc = std::make_unique<running_process>(std::vector<std::string>{
      "/usr/bin/etcd", "--data-dir", dir.file("etcd"), "--listen-client-urls",
      url, "--advertise-client-urls", url, "--listen-peer-urls", peer,
      "--initial-advertise-peer-urls", peer, "--initial-cluster",
      "default=" + peer});
    REQUIRE(proc->wait_for_stderr("ready to serve client requests", 60s));
  }

  /// Whether etcd is not installed (the test then says it skipped).
  bool missing() const {
    if (!proc)
      MESSAGE("SKIPPED: etcd is not installed (Debian's etcd-server)");
    return !proc;
  }

  /// HA options for this etcd: 2 s leases, quick retries.
  etcd_ha_options ha(const std::string& cluster_id) const {
    etcd_ha_options opts;
    opts.endpoints = {address};
    opts.cluster_id = cluster_id;
    opts.lease_ttl = 2s;
    opts.retry = 20ms;
    return opts;
  }

  std::shared_ptr<etcd_client> client() const {
    return std::make_shared<etcd_client>(std::vector<std::string>{address},
                                         2000ms);
  }
};

/// Takes the leader key `key` with a fresh lease; the fence and the lease.
std::pair<etcd_fence, int64_t> take_leader_key(etcd_client& etcd,
                                               const std::string& key) {
  auto lease = etcd.grant_lease(10);
  REQUIRE(lease);
  auto won = etcd.txn({etcd_condition{key, 0}},
                      {etcd_op{etcd_op::put, key, "", *lease, {}}});
  REQUIRE(won);
  REQUIRE(won->succeeded);
  return {etcd_fence{key, won->revision}, *lease};
}

size_t files_in(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] auto& f : fs::directory_iterator(dir))
    ++n;
  return n;
}

} // namespace

TEST_CASE("base64 as etcd's gateway writes it") {
  for (std::string bytes : std::vector<std::string>{
         "", "a", "ab", "abc", "abcd", std::string("\0\xff\x10", 3)})
    CHECK(base64_decode(base64_encode(bytes)) == bytes);
  CHECK(base64_encode("/weir") == "L3dlaXI=");
  CHECK_FALSE(base64_decode("abc"));
  CHECK_FALSE(base64_decode("ab=c"));
  CHECK(etcd_client::prefix_end("/a/") == "/a0");
}

TEST_CASE("the etcd store keeps values in files with fenced pointers") {
  etcd_server etcd;
  if (etcd.missing())
    return;
  auto client = etcd.client();
  auto [fence, lease] = take_leader_key(*client, "/weir/t/leader");
  temp_dir dir;
  auto values = dir.file("ha");
  // A file no pointer names (a write a crash cut short) goes at open.
  fs::create_directories(values + "/job_graphs");
  std::ofstream{values + "/job_graphs/stray"} << "x";
  auto store = etcd_store::open(client, values, "/weir/t/store/", fence);
  REQUIRE(store);
  auto& kv = **store;
  CHECK(files_in(values + "/job_graphs") == 0);

  SUBCASE("put, get, replace, remove and scan in key order") {
    REQUIRE_FALSE(kv.put(column::job_graphs, "b", "two", durability::synced));
    REQUIRE_FALSE(kv.put(column::job_graphs, "a", "one", durability::synced));
    REQUIRE_FALSE(kv.put(column::job_results, "a", "other column",
                         durability::synced));
    REQUIRE_FALSE(kv.put(column::job_graphs, "b", "TWO", durability::synced));
    CHECK(kv.get(column::job_graphs, "b").value() == std::optional<std::string>{"TWO"});
    CHECK(kv.get(column::job_graphs, "zz").value() == std::nullopt);
    // The replaced value's file is gone: one file per key.
    CHECK(files_in(values + "/job_graphs") == 2);
    std::vector<std::string> seen;
    REQUIRE_FALSE(kv.scan(column::job_graphs, [&](auto k, auto v) {
      seen.push_back(std::string{k} + "=" + std::string{v});
    }));
    CHECK(seen == std::vector<std::string>{"a=one", "b=TWO"});
    write_batch batch;
    batch.remove(column::job_graphs, "a");
    batch.put(column::job_results, "a", "done");
    REQUIRE_FALSE(kv.write(batch, durability::synced));
    CHECK(kv.get(column::job_graphs, "a").value() == std::nullopt);
    CHECK(kv.get(column::job_results, "a").value() == std::optional<std::string>{"done"});
    CHECK(files_in(values + "/job_graphs") == 1);
    CHECK(files_in(values + "/job_results") == 1);
  }

  SUBCASE("a leader whose lease ended can write nothing") {
    REQUIRE_FALSE(kv.put(column::checkpoints, "k", "v1", durability::synced));
    REQUIRE_FALSE(client->revoke(lease));
    auto err = kv.put(column::checkpoints, "k", "v2", durability::synced);
    REQUIRE(err);
    CHECK(describe(err).find("refused the write of checkpoints/k: this "
                             "jobmanager is no longer the leader (its etcd "
                             "lease on /weir/t/leader ended)")
          != std::string::npos);
    CHECK(kv.get(column::checkpoints, "k").value() == std::optional<std::string>{"v1"});
    CHECK(files_in(values + "/checkpoints") == 1);
    // Another leader's key does not fence this one's writes in either.
    take_leader_key(*client, "/weir/t/leader");
    CHECK(kv.remove(column::checkpoints, "k", durability::synced));
  }

  SUBCASE("a damaged value file is named, never read as a value") {
    REQUIRE_FALSE(kv.put(column::blobs, "lib", "0123456789", durability::synced));
    auto file = fs::directory_iterator{values + "/blobs"}->path().string();
    {
      std::fstream f{file, std::ios::in | std::ios::out | std::ios::binary};
      f.seekp(-3, std::ios::end);
      f << "XYZ";
    }
    auto got = kv.get(column::blobs, "lib");
    REQUIRE_FALSE(got);
    CHECK(got.error() == make_error(errc::storage_corrupt));
    CHECK(describe(got.error()).find(file + " is damaged") != std::string::npos);
  }
}

TEST_CASE("one jobmanager leads; the standby takes over when it resigns or "
          "loses its lease") {
  etcd_server etcd;
  if (etcd.missing())
    return;
  auto opts = etcd.ha("c1");
  auto never = [] { return false; };
  auto first = leadership::campaign(opts, never, [](const std::string&) {});
  REQUIRE(first);
  REQUIRE_FALSE(first->publish("10.0.0.1:6123"));
  auto client = etcd.client();
  CHECK(find_leader(*client, "c1").value() == "10.0.0.1:6123");
  CHECK(find_leader(*client, "other").value() == "");
  std::atomic<bool> give_up{false};
  std::atomic<bool> noted{false};
  std::vector<std::string> notes; // read once the standby's thread ended
  std::unique_ptr<leadership> second;
  std::thread standby{[&] {
    second = leadership::campaign(
      opts, [&] { return give_up.load(); },
      [&](const std::string& line) {
        notes.push_back(line);
        noted = true;
      });
  }};
  REQUIRE(eventually([&] { return noted.load(); }));
  first.reset(); // resigns: revokes its lease
  standby.join();
  REQUIRE(second);
  CHECK(notes.front() == "the jobmanager at 10.0.0.1:6123 leads");
  CHECK(second->fence().revision > 0);
  // A lease that etcd ended (revoked by someone else here) is noticed by
  // the keeper: the leadership is lost.
  std::atomic<bool> lost{false};
  std::string why;
  second->keep([&](const std::string& w) {
    why = w;
    lost = true;
  });
  auto entries = client->range(leader_key("c1"));
  REQUIRE(entries);
  REQUIRE(entries->size() == 1);
  REQUIRE_FALSE(client->revoke(entries->front().lease));
  REQUIRE(eventually([&] { return lost.load(); }));
  CHECK(why == "etcd ended its lease of /weir/c1/leader");
}

TEST_CASE("a leader that cannot reach etcd stops before its lease could end") {
  etcd_server etcd;
  if (etcd.missing())
    return;
  auto lead = leadership::campaign(etcd.ha("c2"), [] { return false; },
                                   [](const std::string&) {});
  REQUIRE(lead);
  std::atomic<bool> lost{false};
  std::atomic<int64_t> lost_at{0};
  lead->keep([&](const std::string&) {
    lost_at = std::chrono::steady_clock::now().time_since_epoch().count();
    lost = true;
  });
  auto stopped = std::chrono::steady_clock::now();
  etcd.proc->signal(SIGSTOP);
  REQUIRE(eventually([&] { return lost.load(); }));
  auto after = std::chrono::steady_clock::duration{lost_at.load()}
               - stopped.time_since_epoch();
  // Before the lease (2 s from the last renewal, which came before the
  // stop) could end.
  CHECK(after < 2s);
  etcd.proc->signal(SIGCONT);
}
