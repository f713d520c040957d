// The etcd pieces of high availability against a real etcd on loopback:
// the client, the store (files plus pointers, fenced by the leader key) and
// leader election. Skipped with a visible message without etcd
// (Debian's etcd-server).
#include <doctest/doctest.h>

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include <fmt/format.h>

#include "ha/leader_election.hpp"
#include "messages/base64.hpp"
#include "messages/errors.hpp"
#include "etcd_server.hpp"
#include "process.hpp"
#include "ha/etcd_store.hpp"

using namespace weir;
using namespace weir::storage;
using namespace weir::ha;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

namespace fs = std::filesystem;

/// A one-member etcd on free loopback ports (nothing when it is not
/// installed: the test then says it skipped).
struct local_etcd {
  temp_dir dir;
  std::unique_ptr<etcd_server> server;
  std::string address;

  local_etcd() {
    if (!have_etcd())
      return;
    server = std::make_unique<etcd_server>(dir, "127.0.0.1", free_port(),
                                           free_port());
    address = server->address();
  }

  bool missing() const {
    if (!server)
      MESSAGE("SKIPPED: etcd is not installed (Debian's etcd-server)");
    return !server;
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

/// A leadership of cluster `cluster_id` whose keeper runs, and what ended
/// it.
struct kept_leadership {
  std::atomic<bool> lost{false};
  std::string why; ///< read once `lost` is set
  std::unique_ptr<leadership> lead; ///< last: ends before what it writes

  kept_leadership(const local_etcd& etcd, const std::string& cluster_id) {
    lead = leadership::campaign(etcd.ha(cluster_id), [] { return false; },
                                [](const std::string&) {});
    REQUIRE(lead);
    lead->keep([this](const std::string& w) {
      why = w;
      lost = true;
    });
  }
};

/// Takes the leader key `key` with a fresh lease; the fence and the lease.
std::pair<etcd_fence, int64_t> take_leader_key(etcd_client& etcd,
                                               const std::string& key) {
  auto lease = etcd.grant_lease(10);
  REQUIRE(lease);
  auto won = etcd.txn({etcd_condition{key, 0}},
                      {etcd_op{etcd_op::put, key, "", *lease}});
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
  local_etcd etcd;
  if (etcd.missing())
    return;
  auto client = etcd.client();
  auto [fence, lease] = take_leader_key(*client, "/weir/t/leader");
  temp_dir dir;
  auto values = dir.file("ha");
  // A file of an earlier leader that no pointer names (a write a crash cut
  // short) goes at open; one of a later leader (this one was stopped past
  // its lease) and one that is no value file stay.
  fs::create_directories(values + "/job_graphs");
  auto earlier = values + "/job_graphs/00000000000000000001-00000000";
  auto later = values + "/job_graphs/99999999999999999999-00000000";
  auto other = values + "/job_graphs/notes.txt";
  for (auto& f : {earlier, later, other})
    std::ofstream{f} << "x";
  auto store = etcd_store::open(client, values, "/weir/t/store/", fence);
  REQUIRE(store);
  auto& kv = **store;
  CHECK_FALSE(exists(earlier));
  CHECK(exists(later));
  CHECK(exists(other));
  fs::remove(later);
  fs::remove(other);

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

  SUBCASE("a pointer that names anything but a value file is damage") {
    REQUIRE(client->txn({}, {etcd_op{etcd_op::put, "/weir/t/store/blobs/x",
                                     "../../../etc/passwd"}}));
    auto got = kv.get(column::blobs, "x");
    REQUIRE_FALSE(got);
    CHECK(got.error() == make_error(errc::storage_corrupt));
    CHECK(describe(got.error()).find("the etcd pointer of blobs/x names "
                                     "'../../../etc/passwd', which is not a "
                                     "value file of this store")
          != std::string::npos);
    // Replacing it leaves the named file alone.
    REQUIRE_FALSE(kv.put(column::blobs, "x", "ok", durability::synced));
    CHECK(exists("/etc/passwd"));
  }

  SUBCASE("a scan for recovery goes on past a missing value file") {
    REQUIRE_FALSE(kv.put(column::job_graphs, "a", "one", durability::synced));
    REQUIRE_FALSE(kv.put(column::job_graphs, "b", "two", durability::synced));
    auto pointer = client->range("/weir/t/store/job_graphs/a");
    REQUIRE(pointer);
    auto file = values + "/" + pointer->front().value;
    fs::remove(file);
    std::vector<std::string> seen, bad;
    REQUIRE_FALSE(kv.scan_readable(
      column::job_graphs,
      [&](auto k, auto v) {
        seen.push_back(std::string{k} + "=" + std::string{v});
      },
      [&](auto k, const caf::error& why) {
        bad.push_back(std::string{k} + ": " + describe(why));
      }));
    CHECK(seen == std::vector<std::string>{"b=two"});
    REQUIRE(bad.size() == 1);
    CHECK(bad[0].rfind("a: ", 0) == 0);
    CHECK(bad[0].find(file) != std::string::npos);
    // A plain scan still fails as a whole.
    CHECK(kv.scan(column::job_graphs, [](auto, auto) {}));
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

TEST_CASE("one jobmanager leads; the standby takes over when it resigns") {
  local_etcd etcd;
  if (etcd.missing())
    return;
  // A long lease: the standby can only lead this soon if it was revoked.
  auto opts = etcd.ha("c1");
  opts.lease_ttl = 60s;
  auto never = [] { return false; };
  auto first = leadership::campaign(opts, never, [](const std::string&) {});
  REQUIRE(first);
  REQUIRE_FALSE(first->publish("10.0.0.1:6123", ""));
  auto client = etcd.client();
  CHECK(find_leader(*client, "c1").value() == "10.0.0.1:6123");
  CHECK(find_leader(*client, "other").value() == "");
  std::atomic<bool> noted{false};
  std::vector<std::string> notes; // read once the standby's thread ended
  std::unique_ptr<leadership> second;
  std::thread standby{[&] {
    second = leadership::campaign(opts, never, [&](const std::string& line) {
      notes.push_back(line);
      noted = true;
    });
  }};
  REQUIRE(eventually([&] { return noted.load(); }));
  first.reset(); // resigns: revokes its lease
  auto took_over = eventually([&] { return second != nullptr; });
  standby.join();
  REQUIRE(took_over); // within 30 s: long before the lease could end
  CHECK(notes.front() == "the jobmanager at 10.0.0.1:6123 leads");
  CHECK(second->fence().revision > 0);
}

TEST_CASE("a leader whose lease etcd ended stops") {
  local_etcd etcd;
  if (etcd.missing())
    return;
  kept_leadership kept{etcd, "c4"};
  auto& lost = kept.lost;
  auto& why = kept.why;
  auto client = etcd.client();
  auto entries = client->range(leader_key("c4"));
  REQUIRE(entries);
  REQUIRE(entries->size() == 1);
  REQUIRE_FALSE(client->revoke(entries->front().lease));
  REQUIRE(eventually([&] { return lost.load(); }));
  // Which it sees first depends on when the revocation came.
  CHECK((why == "etcd ended its lease of /weir/c4/leader"
         || why == "the leader key /weir/c4/leader was removed or replaced"));
}

TEST_CASE("a leader whose key was removed while its lease lives stops") {
  local_etcd etcd;
  if (etcd.missing())
    return;
  kept_leadership kept{etcd, "c3"};
  auto& lost = kept.lost;
  auto& why = kept.why;
  auto client = etcd.client();
  REQUIRE(client->txn({}, {etcd_op{etcd_op::remove, leader_key("c3")}}));
  REQUIRE(eventually([&] { return lost.load(); }));
  CHECK(why == "the leader key /weir/c3/leader was removed or replaced");
}

TEST_CASE("a leader that cannot reach etcd stops") {
  local_etcd etcd;
  if (etcd.missing())
    return;
  kept_leadership kept{etcd, "c2"};
  auto& lost = kept.lost;
  auto& why = kept.why;
  etcd.server->process().signal(SIGSTOP);
  REQUIRE(eventually([&] { return lost.load(); }));
  etcd.server->process().signal(SIGCONT);
  CHECK(why.find("its lease of /weir/c2/leader was not renewed in time (2 s")
        == 0);
}

TEST_CASE("a job whose stored graph is gone fails alone; the jobmanager "
          "serves on") {
  const std::string weir = std::getenv("WEIR_BIN");
  local_etcd etcd;
  if (etcd.missing())
    return;
  temp_dir dir;
  auto storage = dir.file("ha");
  auto start = [&] {
    return std::make_unique<running_process>(std::vector<std::string>{
      weir, "jobmanager", "--port", "0", any_rest_port,
      "-Dhigh-availability.type=etcd",
      "-Dhigh-availability.etcd.endpoints=" + etcd.address,
      "-Dhigh-availability.etcd.lease-ttl=2 s",
      "-Dhigh-availability.storageDir=" + storage});
  };
  auto jm = start();
  auto rest = rest_address(*jm);
  REQUIRE_FALSE(rest.empty());
  // A job that finished: its result's file stays readable.
  {
    running_process tm{{weir, "taskmanager", "-m", listening_address(*jm),
                        "--slots", "1"}};
    auto done = run_weir({"run", "-m", rest, "examples/collect.json", "--to",
                          "2"},
                         60s);
    REQUIRE(done.exit_code == 0);
    tm.signal(SIGTERM);
    tm.finish(30s);
  }
  // No taskmanager now: the job waits for slots, unfinished.
  auto run = run_weir({"run", "-m", rest, "-d", "examples/collect.json"}, 60s);
  REQUIRE(run.exit_code == 0);
  auto id = run.out.substr(0, 32);
  jm->signal(SIGTERM);
  REQUIRE(jm->finish(30s).exit_code == 0);
  auto pointer = etcd.client()->range("/weir/default/store/job_graphs/" + id);
  REQUIRE(pointer);
  REQUIRE(pointer->size() == 1u);
  auto file = storage + "/default/store/" + pointer->front().value;
  REQUIRE(fs::remove(file));

  jm = start();
  rest = rest_address(*jm);
  REQUIRE_FALSE(rest.empty());
  REQUIRE(jm->wait_for_stderr("weir: job " + id + " cannot be recovered: "
                              "job_graphs/" + id + ": ",
                              30s));
  CHECK(jm->stderr_so_far().find(file) != std::string::npos);
  auto status = run_weir({"status", "-m", rest, id}, 60s);
  CHECK(status.exit_code == 0);
  CHECK(status.out.find("FAILED") != std::string::npos);
  CHECK(status.out.find("the stored job graph cannot be read: job_graphs/"
                        + id + ": ")
        != std::string::npos);
  // The jobmanager serves on: another job runs to its end.
  running_process tm{{weir, "taskmanager", "-m",
                      listening_address(*jm), "--slots", "1"}};
  auto next = run_weir({"run", "-m", rest, "examples/collect.json", "--to",
                        "4"},
                       60s);
  CHECK(next.exit_code == 0);
  CHECK(next.out == "2\n4\n");
  tm.signal(SIGTERM);
  tm.finish(30s);
  jm->signal(SIGTERM);
  CHECK(jm->finish(30s).exit_code == 0);
}

TEST_CASE("a jobmanager that cannot use the storage stays a standby and says "
          "why") {
  const std::string weir = std::getenv("WEIR_BIN");
  auto empty = run_weir({"jobmanager", "-Dhigh-availability.storageDir="},
                        30s);
  CHECK(empty.exit_code == 2);
  CHECK(empty.err == "weir jobmanager: high-availability.storageDir "
                     "(-Dhigh-availability.storageDir=) is empty: give a "
                     "directory, or leave the key out\n");
  local_etcd etcd;
  if (etcd.missing())
    return;
  temp_dir dir;
  auto start = [&](const std::string& storage) {
    return std::make_unique<running_process>(std::vector<std::string>{
      weir, "jobmanager", "--port", "0", any_rest_port,
      "-Dhigh-availability.type=etcd",
      "-Dhigh-availability.etcd.endpoints=" + etcd.address,
      "-Dhigh-availability.etcd.lease-ttl=2 s",
      "-Dhigh-availability.storageDir=" + storage});
  };
  auto shared = dir.file("shared");
  auto a = start(shared);
  auto rest = rest_address(*a);
  REQUIRE_FALSE(rest.empty());
  {
    running_process tm{{weir, "taskmanager", "-m", listening_address(*a),
                        "--slots", "1"}};
    REQUIRE(run_weir({"run", "-m", rest, "examples/collect.json", "--to", "2"},
                     60s)
              .exit_code
            == 0);
    tm.signal(SIGTERM);
    tm.finish(30s);
  }
  a->signal(SIGKILL);
  a->finish(30s);
  // An empty directory (say, the share not mounted) is not the storage:
  // this one does not campaign, though nobody leads.
  auto unmounted = dir.file("unmounted");
  fs::create_directories(unmounted);
  auto b = start(unmounted);
  REQUIRE(b->wait_for_stderr(
    "standby for cluster default: cannot use the storage: none of the 1 "
    "files etcd names under /weir/default/store/ is in '"
      + unmounted + "/default/store' (first: " + unmounted
      + "/default/store/job_results/",
    30s));
  CHECK(b->stderr_so_far().find("is this the directory the other "
                                "jobmanagers use, and is it mounted?; not "
                                "campaigning until it can")
        != std::string::npos);
  // One with the real storage leads, and finds the finished job.
  auto c = start(shared);
  REQUIRE(c->wait_for_stderr("leads cluster default", 30s));
  auto list = run_weir({"list", "-a", "-m", rest_address(*c)}, 60s);
  CHECK(list.out.find("(FINISHED) ") != std::string::npos);
  CHECK(b->stderr_so_far().find("leads cluster default") == std::string::npos);
  for (auto* p : {&b, &c}) {
    (*p)->signal(SIGTERM);
    CHECK((*p)->finish(30s).exit_code == 0);
  }
}
