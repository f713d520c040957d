// A session cluster of real processes on loopback: `weir jobmanager`,
// `weir taskmanager` workers, and remote clients (`run -m`, `list`, `cancel`).
#include <doctest/doctest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <csignal>
#include <random>
#include <regex>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "cluster_fixture.hpp"
#include "job_specs.hpp"
#include "process.hpp"
#include "reference.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

std::string weir_bin() {
  return std::getenv("WEIR_BIN");
}

/// Sends `bytes` to host:port over a fresh TCP connection, then closes it.
void send_raw(const std::string& address, const std::string& bytes) {
  auto colon = address.find(':');
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = htons(static_cast<uint16_t>(std::stoi(address.substr(colon + 1))));
  inet_pton(AF_INET, address.substr(0, colon).c_str(), &sa.sin_addr);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  REQUIRE(connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0);
  CHECK(write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
  close(fd);
}

/// The `weir status` line of `task`'s load; groups: records in/s and out/s,
/// busy and backpressured ms/s.
std::regex load_line(const std::string& task) {
  return std::regex("\n  " + task
                    + " +(\\d+) in/s  (\\d+) out/s  busy (\\d+) ms/s  "
                      "backpressured (\\d+) ms/s\n");
}

} // namespace

TEST_CASE("random bytes and HTTP on the jobmanager's port do not stop it") {
  session_cluster c;
  c.add_worker("tm-1", 1);
  std::mt19937 rng{7};
  for (int round = 0; round < 5; ++round) {
    std::string junk(1 + rng() % 4096, '\0');
    for (auto& ch : junk)
      ch = static_cast<char>(rng());
    send_raw(c.address, junk);
  }
  send_raw(c.address, "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n");
  // A BASP header that announces an absurd payload.
  send_raw(c.address, std::string(64, '\xff'));
  auto r = c.client({"run", "examples/collect.json", "--to", "6"});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "2\n4\n6\n");
  auto list = c.client({"list", "-a"});
  CHECK(list.out.find(" : collect (FINISHED) ") != std::string::npos);
}

TEST_CASE("word count at parallelism 4 over two taskmanager processes") {
  session_cluster c;
  c.add_worker("tm-1", 2);
  c.add_worker("tm-2", 2);
  auto text = random_text(11, 20000);
  auto input = c.dir.write("in.txt", text);
  auto out = c.dir.file("counts.txt");
  auto r = c.client({"run", "examples/wordcount.json", "-p", "4", "--input",
                     input, "--output", out});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("has finished.") != std::string::npos);
  CHECK(sorted_lines(read_file(out)) == as_lines(reference_word_counts(text)));
  CHECK(c.jobmanager->wait_for_stderr("(wordcount) FINISHED", 30s));
}

TEST_CASE("a job waits for a worker that joins after it was submitted") {
  session_cluster c;
  c.add_worker("tm-1", 1);
  auto spec = c.dir.write("sum.json", keyed_sum_spec("sum3", 3, 300000, 7));
  running_process run{{weir_bin(), "run", "-m", c.rest, spec}};
  REQUIRE(run.wait_for_stderr("Job has been submitted with JobID ", 30s));
  REQUIRE(c.jobmanager->wait_for_stderr("(sum3) submitted", 30s));
  c.add_worker("tm-2", 2);
  auto r = run.finish(60s);
  REQUIRE(r.exit_code == 0);
  std::map<std::string, int64_t> expected;
  for (int64_t i = 1; i <= 300000; ++i)
    expected[std::to_string(i % 7)] += i;
  CHECK(sorted_lines(r.out) == as_lines(expected));
}

TEST_CASE("detached runs, list and cancel") {
  session_cluster c;
  c.add_worker("tm-1", 2);
  auto stream = c.dir.write("stream.json", R"({
    "name": "forever",
    "vertices": [
      {"id": "events", "operator": "generator", "params": {"rate": 1000}},
      {"id": "sink", "operator": "discard"}],
    "edges": [{"from": "events", "to": "sink"}]})");
  auto detached = c.client({"run", "-d", stream});
  REQUIRE(detached.exit_code == 0);
  auto id = detached.out.substr(0, 32);
  CHECK(detached.out == id + "\n");
  auto finished = c.client({"run", "examples/collect.json", "--to", "4"});
  REQUIRE(finished.exit_code == 0);
  CHECK(finished.out == "2\n4\n");

  auto running = c.client({"list"});
  CHECK(running.exit_code == 0);
  CHECK(running.out.find(" : " + id + " : forever (RUNNING) ") != std::string::npos);
  CHECK(running.out.find("(collect)") == std::string::npos);
  CHECK(running.out.find("No scheduled jobs.") != std::string::npos);
  auto all = c.client({"list", "-a"});
  CHECK(all.out.find(" : collect (FINISHED) ") != std::string::npos);

  auto status = c.client({"status", id});
  CHECK(status.exit_code == 0);
  CHECK(status.out.find("Job ") == 0);
  CHECK(status.out.find(" : " + id + " : forever (RUNNING) ") != std::string::npos);
  CHECK(status.out.find("Subtasks:\n") != std::string::npos);
  CHECK(status.out.find("  events -> sink    1/1  RUNNING       tm-1\n")
        != std::string::npos);
  CHECK(status.out.find("\nLoad (records per second; busy and backpressured: "
                        "the highest of a subtask, ms per second):\n")
        != std::string::npos);
  std::smatch load;
  REQUIRE(std::regex_search(status.out, load, load_line("events -> sink")));
  CHECK(std::stoi(load[3]) <= 1000);
  CHECK(std::stoi(load[4]) <= 1000);

  auto cancel = c.client({"cancel", id});
  CHECK(cancel.exit_code == 0);
  CHECK(cancel.out == "Cancelled job " + id
                        + ": it is CANCELLING until its subtasks have "
                          "stopped.\n");
  REQUIRE(c.jobmanager->wait_for_stderr("(forever) CANCELED", 30s));
  auto after = c.client({"list", "-a"});
  CHECK(after.out.find(" : " + id + " : forever (CANCELED) ") != std::string::npos);

  auto unknown = c.client({"cancel", std::string(32, 'a')});
  CHECK(unknown.exit_code == 2);
  CHECK(unknown.err == "weir cancel: no job " + std::string(32, 'a') + "\n");
}

TEST_CASE("status shows each task's load: a slow sink busy, its producer "
          "backpressured") {
  session_cluster c;
  c.add_worker("tm-1", 2);
  // An endless generator into a sink that sleeps 5 ms per batch (on its
  // subtask's own thread): credits hold the generator back.
  auto spec = c.dir.write("slow.json", R"({
    "name": "slow",
    "vertices": [
      {"id": "events", "operator": "generator", "params": {"keys": 1000}},
      {"id": "slow", "operator": "discard", "params": {"delay_ms": 5}}],
    "edges": [{"from": "events", "to": "slow", "partitioning": "rebalance"}]})");
  auto detached = c.client({"run", "-d", spec});
  REQUIRE(detached.exit_code == 0);
  auto id = detached.out.substr(0, 32);
  auto figure = [](const std::smatch& m, int i) { return std::stoi(m[i].str()); };
  std::string out;
  bool seen = eventually([&] {
    out = c.client({"status", id}).out;
    std::smatch events;
    std::smatch slow;
    if (!std::regex_search(out, events, load_line("events"))
        || !std::regex_search(out, slow, load_line("slow")))
      return false;
    for (int i = 3; i <= 4; ++i) {
      CHECK(figure(events, i) <= 1000);
      CHECK(figure(slow, i) <= 1000);
    }
    return figure(events, 1) > 0 && figure(events, 4) > 0
           && figure(slow, 1) > 0 && figure(slow, 3) > 0;
  });
  CHECK_MESSAGE(seen, out);
  MESSAGE(out);
  CHECK(c.client({"cancel", id}).exit_code == 0);
  CHECK(c.jobmanager->wait_for_stderr("(slow) CANCELED", 30s));
}

TEST_CASE("a client finds no jobmanager within seconds, never hangs") {
  // A port nothing listens on: a closed listener's port.
  auto r = run_weir({"list", "-m", "127.0.0.1:1"}, 30s);
  CHECK(r.exit_code == 3);
  CHECK(r.err == "weir list: cannot reach the jobmanager's REST API at "
                 "http://127.0.0.1:1: cannot connect (no jobmanager's REST "
                 "API listens there: check rest.port and -m)\n");
  auto bad = run_weir({"list", "-m", "nohostport"}, 30s);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err == "weir list: -m 'nohostport' is not HOST:PORT, "
                   "http(s)://HOST:PORT or etcd://HOST:PORT (the "
                   "jobmanager's REST API)\n");
}

TEST_CASE("a worker says in words why it cannot reach its master") {
  auto weir = std::string{std::getenv("WEIR_BIN")};
  running_process tm{{weir, "taskmanager", "-m", "127.0.0.1:1"}};
  CHECK(tm.wait_for_stderr("cannot reach the jobmanager at 127.0.0.1:1: "
                           "cannot connect (Connection refused: is a "
                           "jobmanager running there, and is 1 its "
                           "jobmanager.rpc.port?); retrying in ",
                           30s));
  CHECK(tm.stderr_so_far().find("system_error") == std::string::npos);
  tm.signal(SIGTERM);
  tm.finish(30s);
}

TEST_CASE("workers started before the master register once it is up") {
  temp_dir dir;
  // Pick the port by starting and stopping a jobmanager on port 0.
  std::string address;
  {
    running_process probe{{weir_bin(), "jobmanager", "--port", "0",
                           "--state-dir", dir.file("probe")}};
    address = listening_address(probe);
    REQUIRE_FALSE(address.empty());
    probe.signal(SIGTERM);
    probe.finish(30s);
  }
  running_process worker{{weir_bin(), "taskmanager", "-m", address, "--id",
                          "early"}};
  REQUIRE(worker.wait_for_stderr("retrying in", 30s));
  auto port = address.substr(address.find(':') + 1);
  running_process master{{weir_bin(), "jobmanager", "--port", port,
                          "--state-dir", dir.file("state")}};
  CHECK(master.wait_for_stderr("TaskExecutor early registered with 1 slots", 30s));
  worker.signal(SIGTERM);
  CHECK(worker.finish(30s).exit_code == 0);
  master.signal(SIGTERM);
  CHECK(master.finish(30s).exit_code == 0);
}

TEST_CASE("a taskmanager of another cluster id is refused and the master "
          "serves on") {
  // Clients talk to the REST API, which has no cluster id (as in Flink);
  // the cluster's own protocol keeps clusters apart.
  temp_dir dir;
  running_process master{{weir_bin(), "jobmanager", "--port", "0",
                          "--state-dir", dir.file("state"), any_rest_port,
                          "-Dhigh-availability.cluster-id=alpha"}};
  std::string address = listening_address(master);
  REQUIRE_FALSE(address.empty());
  running_process other{{weir_bin(), "taskmanager", "-m", address, "--id",
                         "beta-1", "-Dhigh-availability.cluster-id=beta"}};
  CHECK(other.wait_for_stderr(
    "taskmanager beta-1: " + address + " belongs to another weir cluster or "
    "version (high-availability.cluster-id differs); retrying in ",
    30s));
  running_process same{{weir_bin(), "taskmanager", "-m", address, "--id",
                        "alpha-1", "-Dhigh-availability.cluster-id=alpha"}};
  CHECK(master.wait_for_stderr("TaskExecutor alpha-1 registered", 30s));
  auto listed = run_weir({"list", "-m", rest_address(master)}, 30s);
  CHECK(listed.exit_code == 0);
  CHECK(listed.out == "No running jobs.\nNo scheduled jobs.\n");
  CHECK(master.stderr_so_far().find("beta-1 registered") == std::string::npos);
  other.signal(SIGTERM);
  other.finish(30s);
  same.signal(SIGTERM);
  same.finish(30s);
  master.signal(SIGTERM);
  CHECK(master.finish(30s).exit_code == 0);
}

TEST_CASE("a port where something silent listens gives an error, not a hang") {
  // A listening socket that never speaks: connections complete in the
  // kernel's backlog, but no BASP handshake ever comes.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  REQUIRE(fd >= 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_port = 0;
  inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0);
  REQUIRE(listen(fd, 16) == 0);
  socklen_t len = sizeof(sa);
  getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len);
  auto address = "127.0.0.1:" + std::to_string(ntohs(sa.sin_port));
  auto r = run_weir({"list", "-m", address}, 30s);
  close(fd);
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 3);
  CHECK(r.err == "weir list: cannot reach the jobmanager's REST API at http://"
                   + address + ": no answer within 8000 ms (is the "
                   "jobmanager stopped or overloaded?)\n");
}

TEST_CASE("a job that never gets enough slots fails after slot.request.timeout") {
  session_cluster c{{"-Dslot.request.timeout=1 s"}};
  c.add_worker("tm-1", 1);
  auto r = c.client({"run", "examples/collect.json", "-p", "3"});
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("ended FAILED: could not get 3 of 3 slots within "
                   "slot.request.timeout (1 s): 1 free slot fits; the job "
                   "needs 3 at once")
        != std::string::npos);
  // Said while it waited, too (stderr is no terminal).
  CHECK(r.err.find("weir run: waiting for 3 of 3 slots: 1 free slot fits; "
                   "the job needs 3 at once\n")
        != std::string::npos);
  // The slot it did not get stays usable.
  auto ok = c.client({"run", "examples/collect.json", "--to", "2"});
  CHECK(ok.exit_code == 0);
  CHECK(ok.out == "2\n");
}

namespace {

/// Runs `weir ARGS` against `c` until its output contains `text` (30 s
/// deadline); the last output.
std::string poll_client(session_cluster& c, std::vector<std::string> args,
                        const std::string& text) {
  auto until = std::chrono::steady_clock::now() + 30s;
  std::string out;
  while (std::chrono::steady_clock::now() < until) {
    out = c.client(args).out;
    if (out.find(text) != std::string::npos)
      break;
  }
  return out;
}

const char* forever_spec = R"({
    "name": "forever", "parallelism": 2,
    "vertices": [
      {"id": "events", "operator": "generator", "params": {"rate": 1000}},
      {"id": "sink", "operator": "discard"}],
    "edges": [{"from": "events", "to": "sink"}]})";

/// Submits forever_spec detached; its id once a subtask runs on `worker`.
std::string run_forever(session_cluster& c, const std::string& worker) {
  auto detached = c.client({"run", "-d", c.dir.write("forever.json", forever_spec)});
  REQUIRE(detached.exit_code == 0);
  auto id = detached.out.substr(0, 32);
  auto running = "RUNNING       " + worker;
  REQUIRE(poll_client(c, {"status", id}, running).find(running)
          != std::string::npos);
  return id;
}

} // namespace

TEST_CASE("a job that lost its slots shows it waits for them, then fails "
          "after slot.request.timeout") {
  session_cluster c{{"-Dslot.request.timeout=8 s",
                     "-Drestart-strategy.type=fixed-delay",
                     "-Drestart-strategy.fixed-delay.delay=50 ms"}};
  c.add_worker("tm-a", 1);
  c.add_worker("tm-b", 1);
  auto id = run_forever(c, "tm-b");
  c.workers[1]->signal(SIGKILL);
  c.workers[1]->finish(30s);
  // Restarted, it asks for both slots again; there is only tm-a's (a job
  // gets all of its slots or none).
  auto waiting = " s, waiting for 2 of 2 slots since ";
  auto line = poll_client(c, {"list"}, waiting);
  CHECK(std::regex_search(line, std::regex{" : " + id + R"( : forever \(RUNNING\) [0-9.]+)" + waiting}));
  CHECK(poll_client(c, {"status", id}, waiting).find(waiting) != std::string::npos);
  CHECK(c.jobmanager->wait_for_stderr(
    "(forever) FAILED: could not get 2 of 2 slots within slot.request.timeout "
    "(8 s)", 60s));
  CHECK(poll_client(c, {"list", "-a"}, "forever (FAILED) ").find(
          " : " + id + " : forever (FAILED) ") != std::string::npos);
}

TEST_CASE("list and status both show a job being cancelled as CANCELLING") {
  // The worker is stopped, so its subtasks cannot answer the cancel; a long
  // heartbeat timeout keeps it from being declared lost meanwhile.
  session_cluster c{{"-Dheartbeat.timeout=5 min"}};
  c.add_worker("tm-1", 2);
  auto id = run_forever(c, "tm-1");
  c.workers[0]->signal(SIGSTOP);
  auto cancel = c.client({"cancel", id});
  CHECK(cancel.exit_code == 0);
  auto cancelling = " : " + id + " : forever (CANCELLING) ";
  CHECK(c.client({"list"}).out.find(cancelling) != std::string::npos);
  CHECK(c.client({"status", id}).out.find(cancelling) != std::string::npos);
  c.workers[0]->signal(SIGCONT);
  CHECK(poll_client(c, {"list", "-a"}, "forever (CANCELED) ").find(
          " : " + id + " : forever (CANCELED) ") != std::string::npos);
}

TEST_CASE("workers register again with a restarted master") {
  temp_dir dir;
  std::string address;
  std::string rest;
  auto start_master = [&](const std::string& port) {
    auto rest_port = rest.empty() ? "0" : rest.substr(rest.find(':') + 1);
    auto p = std::make_unique<running_process>(std::vector<std::string>{
      weir_bin(), "jobmanager", "--port", port, "--state-dir", dir.file("state"),
      "-Drest.port=" + rest_port});
    address = listening_address(*p);
    REQUIRE_FALSE(address.empty());
    rest = rest_address(*p);
    return p;
  };
  auto master = start_master("0");
  running_process worker{{weir_bin(), "taskmanager", "-m", address, "--id",
                          "tm-x", "--slots", "2"}};
  REQUIRE(master->wait_for_stderr("TaskExecutor tm-x registered", 30s));
  master->signal(SIGKILL);
  master->finish(30s);
  REQUIRE(worker.wait_for_stderr("lost the jobmanager; reconnecting", 30s));
  master = start_master(address.substr(address.find(':') + 1));
  CHECK(master->wait_for_stderr("TaskExecutor tm-x registered with 2 slots", 30s));
  auto r = run_weir({"run", "-m", rest, "examples/collect.json", "--to", "4"},
                    60s);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "2\n4\n");
  worker.signal(SIGTERM);
  CHECK(worker.finish(30s).exit_code == 0);
  master->signal(SIGTERM);
  CHECK(master->finish(30s).exit_code == 0);
}

TEST_CASE("backpressure across processes keeps both workers' memory bounded") {
  session_cluster c;
  c.add_worker("tm-1", 1);
  c.add_worker("tm-2", 1);
  // Subtask k of both vertices shares slot k, one slot per worker: half of
  // each generator's batches cross to the other worker, where a slow sink
  // takes 1 ms per batch. 2 million records would take far more than 64 MiB
  // if the senders ran ahead.
  auto spec = c.dir.write("slow.json", R"({
    "name": "slow", "parallelism": 2,
    "vertices": [
      {"id": "events", "operator": "generator", "params": {"count": 2000000, "keys": 1000000}},
      {"id": "slow", "operator": "discard", "params": {"delay_ms": 1}}],
    "edges": [{"from": "events", "to": "slow", "partitioning": "rebalance"}]})");
  auto r = c.client({"run", spec});
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("(2000000 records in, 2000000 records out)")
        != std::string::npos);
  for (auto& w : c.workers) {
    w->signal(SIGTERM);
    auto done = w->finish(30s);
    MESSAGE("worker peak RSS: " << done.max_rss_kb << " KiB");
    CHECK(done.max_rss_kb < 64 * 1024);
  }
  c.workers.clear();
}

TEST_CASE("a job id given twice runs once; another job under it is refused") {
  session_cluster c;
  c.add_worker("tm-1", 1);
  std::string id = "00000000000000000000000000c0ffee";
  auto first = c.client({"run", "--jobid", id, "examples/collect.json", "--to", "4"});
  REQUIRE(first.exit_code == 0);
  CHECK(first.out == "2\n4\n");
  auto again = c.client({"run", "--jobid", id, "examples/collect.json", "--to", "4"});
  CHECK(again.exit_code == 0);
  CHECK(again.out == "2\n4\n");
  auto other = c.client({"run", "--jobid", id, "examples/collect.json", "--to", "6"});
  CHECK(other.exit_code == 2);
  CHECK(other.err == "weir run: job rejected: job " + id
                       + " already exists with a different graph\n");
  auto all = c.client({"list", "-a"});
  CHECK(all.out.find(" : " + id + " : collect (FINISHED) ") != std::string::npos);
  REQUIRE(c.jobmanager->wait_for_stderr("job " + id + " (collect) FINISHED", 30s));
  auto log = c.jobmanager->stderr_so_far();
  auto first_submit = log.find("job " + id + " (collect) submitted");
  CHECK(first_submit != std::string::npos);
  CHECK(log.find("job " + id + " (collect) submitted", first_submit + 1)
        == std::string::npos); // ran once
  auto bad = c.client({"run", "--jobid", "xyz", "examples/collect.json"});
  CHECK(bad.exit_code == 2);
  CHECK(bad.err == "weir run: --jobid 'xyz' is not a job id (32 hex characters)\n");
}

TEST_CASE("a job without workers says why it waits; a profile none fits "
          "says so") {
  session_cluster c{{"-Dslot.request.timeout=2 s"}};
  auto none = c.client({"run", "examples/collect.json", "--to", "2"});
  CHECK(none.exit_code == 1);
  CHECK(none.err.find("weir run: waiting for 1 of 1 slots: no TaskExecutor "
                      "is registered\n")
        != std::string::npos);
  c.add_worker("tm-1", 2);
  auto status_of_waiting = c.client({"run", "-d", "examples/collect.json",
                                     "-Dslot.request.timeout=60 s", "-p",
                                     "3"});
  REQUIRE(status_of_waiting.exit_code == 0);
  auto id = status_of_waiting.out.substr(0, 32);
  std::string out;
  auto until = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < until
         && out.find("Waiting for slots: ") == std::string::npos)
    out = c.client({"status", id}).out;
  CHECK(out.find("Waiting for slots: 2 free slots fit; the job needs 3 at "
                 "once\n")
        != std::string::npos);
  CHECK(c.client({"cancel", id}).exit_code == 0);
}
