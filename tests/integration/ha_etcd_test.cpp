// High availability through etcd across hosts: a real etcd, two jobmanagers
// on two hosts (network namespaces on one bridge), a taskmanager beside
// each and a client on a third host, all finding the leader through etcd.
// Needs root, iproute2 and etcd (Debian's etcd-server); skipped with a
// visible message otherwise.
#include <doctest/doctest.h>

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "cluster_fixture.hpp"
#include "etcd_server.hpp"
#include "netns.hpp"
#include "process.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

/// The hosts of a cluster: etcd on the hub, jobmanager A and a taskmanager
/// on host "a", jobmanager B and a taskmanager on "b", the client on "c".
/// Leases of 2 s and heartbeats of 3 s keep the failover short.
struct ha_cluster {
  lan hosts{{"a", "b", "c"}};
  temp_dir dir;
  std::string weir = std::getenv("WEIR_BIN");
  std::unique_ptr<etcd_server> etcd;
  std::string etcd_address;
  std::string skipped; ///< why the machine cannot run this test

  ha_cluster() {
    if (geteuid() != 0) {
      skipped = "network namespaces need root";
      return;
    }
    if (!have_etcd()) {
      skipped = "etcd is not installed (Debian's etcd-server)";
      return;
    }
    if (!hosts.ok()) {
      skipped = "cannot make network namespaces: " + hosts.problem();
      return;
    }
    // A namespace of its own: fixed ports are free there.
    etcd = std::make_unique<etcd_server>(dir, hosts.address("hub"), 2379, 2380,
                                         hosts.on("hub", {}));
    etcd_address = etcd->address();
  }

  /// Flags every process of the cluster shares.
  std::vector<std::string> common() const {
    return {"-Dheartbeat.interval=500 ms", "-Dheartbeat.timeout=3 s",
            "-Dcluster.registration.max-timeout=500 ms"};
  }

  std::unique_ptr<running_process> jobmanager(const std::string& host) {
    std::vector<std::string> argv{
      weir, "jobmanager", "--host", hosts.address(host), "--port", "6123",
      "-Dsecurity.ssl.internal.enabled=false",
      "-Dhigh-availability.type=etcd",
      // etcd's own form of a client URL, as etcdctl takes it.
      "-Dhigh-availability.etcd.endpoints=http://" + etcd_address,
      "-Dhigh-availability.storageDir=" + dir.file("ha"),
      "-Dhigh-availability.etcd.lease-ttl=2 s",
      "-Dhigh-availability.etcd.retry-period=100 ms",
      // Clients on host c reach the leader's REST API at the address it
      // publishes: rest.address, not the bind address (every address).
      "-Drest.bind-address=0.0.0.0", "-Drest.address=" + hosts.address(host),
      "-Dsecurity.ssl.rest.authentication-enabled=false"};
    for (auto& f : common())
      argv.push_back(f);
    return std::make_unique<running_process>(hosts.on(host, argv));
  }

  std::unique_ptr<running_process> taskmanager(const std::string& host) {
    std::vector<std::string> argv{weir, "taskmanager", "-m",
                                  "etcd://" + etcd_address, "--slots", "2",
                                  "--id", "tm-" + host};
    for (auto& f : common())
      argv.push_back(f);
    return std::make_unique<running_process>(hosts.on(host, argv));
  }

  /// The running processes of a cluster.
  struct processes {
    std::unique_ptr<running_process> a, b, tm_a, tm_b;
  };

  /// Starts jobmanager A, waits until it leads, then B as its standby, and
  /// a taskmanager on each host, registered with A.
  processes start() {
    processes p;
    p.a = jobmanager("a");
    REQUIRE(p.a->wait_for_stderr("leads cluster default: published "
                                   + hosts.address("a") + ":6123",
                                 30s));
    p.b = jobmanager("b");
    REQUIRE(p.b->wait_for_stderr("the jobmanager at " + hosts.address("a")
                                   + ":6123 leads; waiting to take over",
                                 30s));
    p.tm_a = taskmanager("a");
    p.tm_b = taskmanager("b");
    REQUIRE(p.a->wait_for_stderr("TaskExecutor tm-a registered", 30s));
    REQUIRE(p.a->wait_for_stderr("TaskExecutor tm-b registered", 30s));
    return p;
  }

  /// A client command on host "c".
  std::vector<std::string> client(std::vector<std::string> args) const {
    args.insert(args.begin(), weir);
    args.insert(args.begin() + 2, {"-m", "etcd://" + etcd_address});
    return hosts.on("c", args);
  }

  /// An exactly-once job of `count` records that takes seconds, with
  /// checkpoints every 100 ms; it writes into `out`.
  std::string paced_job(const std::string& out, int count) {
    return dir.write("ha.json", fmt::format(R"({{
      "name": "ha", "parallelism": 2,
      "config": {{"execution.checkpointing.interval": "100 ms"}},
      "vertices": [
        {{"id": "events", "operator": "generator", "params": {{"count": {}, "rate": 1000, "keys": 7}}}},
        {{"id": "out", "operator": "text_file", "params": {{"path": "{}", "delivery": "exactly-once"}}}}],
      "edges": [{{"from": "events", "to": "out", "partitioning": "rebalance"}}]}})",
                                            count, out));
  }
};

/// Milliseconds since `t0`.
long long since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
           std::chrono::steady_clock::now() - t0)
    .count();
}

} // namespace

TEST_CASE("etcd: the standby leads after the leader's kill -9, the job "
          "finishes exactly once and the client follows") {
  ha_cluster c;
  if (!c.skipped.empty()) {
    MESSAGE("SKIPPED: " << c.skipped);
    return;
  }
  auto [a, b, tm_a, tm_b] = c.start();
  // A job that finished before the crash is not run again.
  auto done = run_process(c.client({"run", "examples/collect.json", "--to",
                                    "4"}),
                          60s);
  REQUIRE(done.exit_code == 0);
  CHECK(done.out == "2\n4\n");
  auto out = c.dir.file("out");
  running_process client{c.client({"run", c.paced_job(out, 8000)})};
  REQUIRE(a->wait_for_stderr("(ha) completed checkpoint 5 ", 60s));
  auto killed = std::chrono::steady_clock::now();
  a->signal(SIGKILL);
  a->finish(30s);
  // Clients asked at once, while etcd still names the dead leader, wait for
  // the next one and carry on there.
  const std::string submitted = "Job has been submitted with JobID ";
  REQUIRE(client.wait_for_stderr(submitted, 10s));
  auto id = client.stderr_so_far();
  id = id.substr(id.find(submitted) + submitted.size(), 32);
  running_process waiter{c.client({"wait", id})};
  running_process lister{c.client({"list"})};
  REQUIRE(b->wait_for_stderr("took over cluster default as the leader", 30s));
  REQUIRE(b->wait_for_stderr("(ha) recovered", 30s));
  REQUIRE(b->wait_for_stderr("(ha) switched from CREATED to RUNNING", 60s));
  MESSAGE("kill -9 of the leader to the recovered job RUNNING: "
          << since(killed) << " ms");
  auto attached = client.finish(120s);
  CHECK(attached.exit_code == 0);
  auto lost_line = "weir run: lost the jobmanager at http://"
                   + c.hosts.address("a") + ":";
  CHECK(attached.err.find(lost_line) != std::string::npos);
  CHECK(attached.err.find("; waiting up to 60 s for cluster default's next "
                          "leader (client.leader-wait)\n")
        != std::string::npos);
  auto now_line = "weir run: cluster default's leader is now http://"
                  + c.hosts.address("b") + ":";
  CHECK(attached.err.find(now_line) != std::string::npos);
  // (Each found the dead leader, or, started late enough, the new one.)
  auto waited = waiter.finish(120s);
  CHECK(waited.exit_code == 0);
  if (waited.err.find("weir wait: lost the jobmanager at ")
      != std::string::npos)
    CHECK(waited.err.find("weir wait: cluster default's leader is now http://"
                          + c.hosts.address("b") + ":")
          != std::string::npos);
  CHECK(waited.err.find("Job with JobID " + id + " has finished.")
        != std::string::npos);
  auto listed = lister.finish(120s);
  CHECK(listed.exit_code == 0);
  CHECK(listed.out.find(id + " : ha (") != std::string::npos);
  CHECK(committed_lines(out) == generated_lines(8000, 7));
  REQUIRE(b->wait_for_stderr("(ha) FINISHED", 30s));
  CHECK(b->stderr_so_far().find("(ha) resumes from checkpoint ")
        != std::string::npos);
  CHECK(b->stderr_so_far().find("(collect) recovered") == std::string::npos);
  // A new client finds the new leader through etcd.
  auto list = run_process(c.client({"list", "-a"}), 30s);
  CHECK(list.exit_code == 0);
  CHECK(list.out.find(" : ha (FINISHED) ") != std::string::npos);
  tm_a->signal(SIGTERM);
  tm_b->signal(SIGTERM);
  CHECK(tm_a->finish(30s).exit_code == 0);
  CHECK(tm_b->finish(30s).exit_code == 0);
  b->signal(SIGTERM);
  CHECK(b->finish(30s).exit_code == 0);
}

TEST_CASE("etcd: a leader stopped past its lease does not act when it "
          "continues") {
  ha_cluster c;
  if (!c.skipped.empty()) {
    MESSAGE("SKIPPED: " << c.skipped);
    return;
  }
  auto [a, b, tm_a, tm_b] = c.start();
  auto out = c.dir.file("out");
  running_process client{c.client({"run", c.paced_job(out, 10000)})};
  REQUIRE(a->wait_for_stderr("(ha) completed checkpoint 3 ", 60s));
  a->signal(SIGSTOP);
  // What it wrote before the stop is read now: only what comes after the
  // SIGCONT counts.
  a->wait_for_stderr("(never written)", 500ms);
  REQUIRE(b->wait_for_stderr("took over cluster default as the leader", 30s));
  // The workers left the stopped leader (heartbeats) and run the job for
  // the new one.
  REQUIRE(b->wait_for_stderr("(ha) switched from CREATED to RUNNING", 60s));
  REQUIRE(b->wait_for_stderr("(ha) completed checkpoint ", 60s));
  auto before = a->stderr_so_far().size();
  a->signal(SIGCONT);
  auto ended = a->finish(30s);
  CHECK(ended.exit_code == 5);
  auto after = ended.err.substr(before);
  INFO("the stopped leader's log after SIGCONT:\n" << after);
  CHECK(after.find("lost the leadership: ") != std::string::npos);
  CHECK(after.find("completed checkpoint") == std::string::npos);
  CHECK(after.find("switched from") == std::string::npos);
  auto attached = client.finish(120s);
  CHECK(attached.exit_code == 0);
  CHECK(committed_lines(out) == generated_lines(10000, 7));
  REQUIRE(b->wait_for_stderr("(ha) FINISHED", 30s));
  tm_a->signal(SIGTERM);
  tm_b->signal(SIGTERM);
  tm_a->finish(30s);
  tm_b->finish(30s);
  b->signal(SIGTERM);
  CHECK(b->finish(30s).exit_code == 0);
}

TEST_CASE("etcd: bad settings and an unreachable etcd give one-line errors") {
  auto jm = [](std::vector<std::string> flags) {
    flags.insert(flags.begin(), {"jobmanager", "--port", "0"});
    return run_weir(flags, 30s);
  };
  auto no_endpoints = jm({"-Dhigh-availability.type=etcd"});
  CHECK(no_endpoints.exit_code == 2);
  CHECK(no_endpoints.err
        == "weir jobmanager: high-availability.type: etcd needs "
           "high-availability.etcd.endpoints (HOST:PORT of etcd's client "
           "URLs)\n");
  auto bad_endpoint = jm({"-Dhigh-availability.type=etcd",
                          "-Dhigh-availability.etcd.endpoints=etcd-host"});
  CHECK(bad_endpoint.exit_code == 2);
  CHECK(bad_endpoint.err
        == "weir jobmanager: high-availability.etcd.endpoints: 'etcd-host' is "
           "not a list of etcd client addresses (expected HOST:PORT or "
           "http://HOST:PORT, comma-separated)\n");
  // URLs as etcdctl takes them; before, the scheme became part of the host
  // name and the jobmanager waited for etcd forever.
  auto tls = jm({"-Dhigh-availability.type=etcd",
                 "-Dhigh-availability.etcd.endpoints=https://e:2379"});
  CHECK(tls.exit_code == 2);
  CHECK(tls.err
        == "weir jobmanager: high-availability.etcd.endpoints: "
           "'https://e:2379' uses https://: etcd over TLS is not supported "
           "yet (expected HOST:PORT or http://HOST:PORT, comma-separated)\n");
  // A list in one -D (a comma once split it into two flags).
  auto scheme = jm({"-Dhigh-availability.type=etcd",
                    "-Dhigh-availability.etcd.endpoints=127.0.0.1:2379,"
                    "unix://e:2379"});
  CHECK(scheme.exit_code == 2);
  CHECK(scheme.err
        == "weir jobmanager: high-availability.etcd.endpoints: "
           "'127.0.0.1:2379,unix://e:2379' has a scheme other than http:// "
           "(expected HOST:PORT or http://HOST:PORT, comma-separated)\n");
  auto no_dir = jm({"-Dhigh-availability.type=etcd",
                    "-Dhigh-availability.etcd.endpoints=127.0.0.1:2379"});
  CHECK(no_dir.exit_code == 2);
  CHECK(no_dir.err
        == "weir jobmanager: high-availability.type: etcd needs "
           "high-availability.storageDir: a directory every jobmanager can "
           "read and write\n");
  auto unknown = jm({"-Dhigh-availability.type=zookeeper"});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err.find("high-availability.type") != std::string::npos);
  // Nobody answers on this port: the client says so at once.
  auto port = free_port();
  auto lost = run_weir({"list", "-m", fmt::format("etcd://127.0.0.1:{}", port)},
                       30s);
  CHECK(lost.exit_code == 3);
  CHECK(lost.err.find(fmt::format("weir list: cannot ask etcd for the leader "
                                  "of cluster default: cannot reach etcd "
                                  "(127.0.0.1:{}: ",
                                  port))
        == 0);
  auto bad_scheme = run_weir({"list", "-m", "etcd://"}, 30s);
  CHECK(bad_scheme.exit_code == 2);
}

TEST_CASE("etcd: a client finds no leader while none leads") {
  ha_cluster c;
  if (!c.skipped.empty()) {
    MESSAGE("SKIPPED: " << c.skipped);
    return;
  }
  auto r = run_process(c.client({"list", "-Dclient.leader-wait=1 s"}), 30s);
  CHECK(r.exit_code == 3);
  auto none = "no jobmanager leads cluster default (etcd at " + c.etcd_address
              + ")";
  CHECK(r.err == "weir list: " + none + "; waiting up to 1 s for one "
                 "(client.leader-wait)\nweir list: " + none + " (waited 1 s "
                 "for a leader: client.leader-wait)\n");
}
