// A session cluster across two network namespaces joined by virtual links:
// the jobmanager and one worker in one namespace, a worker and the client in
// the other, so records and control messages cross a real (virtual) network.
// Needs root and iproute2; skipped with a visible message otherwise.
#include <doctest/doctest.h>

#include <unistd.h>

#include <csignal>
#include <fstream>
#include <cstdlib>
#include <memory>
#include <vector>

#include <fmt/format.h>

#include "net/certificates.hpp"

#include "netns.hpp"
#include "process.hpp"
#include "reference.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

/// Hosts `names` on a virtual network, or null (with a message saying why
/// the test is skipped).
std::unique_ptr<lan> hosts_or_skip(const std::vector<std::string>& names) {
  if (geteuid() != 0) {
    MESSAGE("SKIPPED: network namespaces need root");
    return nullptr;
  }
  auto hosts = std::make_unique<lan>(names);
  if (!hosts->ok()) {
    MESSAGE("SKIPPED: cannot make network namespaces: " << hosts->problem());
    return nullptr;
  }
  return hosts;
}

/// A jobmanager on host `name` (its RPC port and REST API on the host's
/// address), state in `dir`; not on loopback, so it wants an explicit TLS
/// decision: `security`.
std::vector<std::string>
jobmanager_on(const lan& hosts, const std::string& name, const temp_dir& dir,
              std::vector<std::string> security
              = {"-Dsecurity.ssl.internal.enabled=false"}) {
  std::vector<std::string> argv{std::getenv("WEIR_BIN"), "jobmanager",
                                "--host", hosts.address(name), "--port", "0",
                                "--state-dir", dir.file("state"),
                                "-Drest.bind-address=" + hosts.address(name),
                                any_rest_port,
                                "-Dsecurity.ssl.rest.authentication-enabled="
                                "false"};
  argv.insert(argv.end(), security.begin(), security.end());
  return hosts.on(name, argv);
}

} // namespace

TEST_CASE("word count across two network namespaces") {
  auto lan_or_none = hosts_or_skip({"a", "b"});
  if (!lan_or_none)
    return;
  auto& hosts = *lan_or_none;
  std::string weir = std::getenv("WEIR_BIN");
  temp_dir dir;
  running_process master{jobmanager_on(hosts, "a", dir)};
  std::string address = listening_address(master);
  REQUIRE_FALSE(address.empty());
  auto rest = rest_address(master);
  REQUIRE(rest.rfind(hosts.address("a") + ":", 0) == 0);
  running_process near{hosts.on(
    "a", {weir, "taskmanager", "-m", address, "--slots", "2", "--id",
              "tm-a", "-Dtaskmanager.host=" + hosts.address("a"),
              "-Dsecurity.ssl.internal.enabled=false"})};
  running_process far{hosts.on(
    "b", {weir, "taskmanager", "-m", address, "--slots", "2", "--id",
              "tm-b", "-Dtaskmanager.host=" + hosts.address("b"),
              "-Dsecurity.ssl.internal.enabled=false"})};
  REQUIRE(master.wait_for_stderr("TaskExecutor tm-a registered", 30s));
  REQUIRE(master.wait_for_stderr("TaskExecutor tm-b registered", 30s));
  auto text = random_text(23, 20000);
  auto input = dir.write("in.txt", text);
  auto out = dir.file("counts.txt");
  auto r = run_process(hosts.on(
                         "b", {weir, "run", "-m", rest,
                                   "examples/wordcount.json", "-p", "4",
                                   "--input", input, "--output", out}),
                       120s);
  CHECK(r.exit_code == 0);
  CHECK(sorted_lines(read_file(out)) == as_lines(reference_word_counts(text)));
  far.signal(SIGTERM);
  near.signal(SIGTERM);
  CHECK(far.finish(30s).exit_code == 0);
  CHECK(near.finish(30s).exit_code == 0);
  master.signal(SIGTERM);
  CHECK(master.finish(30s).exit_code == 0);
}

namespace {

/// Bytes the process read and wrote through system calls so far (sockets
/// and files alike): /proc/PID/io's rchar + wchar.
long long io_bytes(int pid) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/io"};
  std::string key;
  long long value = 0;
  long long sum = 0;
  while (in >> key >> value)
    if (key == "rchar:" || key == "wchar:")
      sum += value;
  return sum;
}

/// Lines of `n` characters each, `count` of them, all different.
std::string numbered_lines(size_t count, size_t n) {
  std::string out;
  out.reserve(count * (n + 1));
  for (size_t i = 0; i < count; ++i) {
    auto line = fmt::format("{:0{}}", i, n);
    out += line;
    out += '\n';
  }
  return out;
}

/// A jobmanager on host "jm" and a taskmanager with one slot on each of
/// "a" and "b"; TLS with node certificates naming each host when `tls`.
/// A job's lines read on both workers all go to one writer (rebalance to
/// a sink of parallelism 1): half of them cross from one worker to the
/// other, and must not cross the jobmanager.
void exchange_directly(bool tls) {
  auto lan_or_none = hosts_or_skip({"jm", "a", "b"});
  if (!lan_or_none)
    return;
  auto& hosts = *lan_or_none;
  std::string weir = std::getenv("WEIR_BIN");
  temp_dir dir;
  auto validity = weir::net::validity::days(1);
  auto sec = dir.file("sec");
  std::vector<std::string> security{"-Dsecurity.ssl.internal.enabled=false"};
  if (tls) {
    REQUIRE(weir::net::make_ca(sec, "test-ca", validity));
    for (auto name : {"jm", "a", "b"})
      REQUIRE(weir::net::issue(sec, weir::net::cert_kind::node, name,
                               {hosts.address(name)}, validity));
  }
  auto flags = [&](const std::string& name) {
    if (!tls)
      return security;
    return std::vector<std::string>{
      "-Dsecurity.ssl.internal.enabled=true",
      "-Dsecurity.ssl.internal.certificate=" + sec + "/" + name + ".pem",
      "-Dsecurity.ssl.internal.key=" + sec + "/" + name + "-key.pem",
      "-Dsecurity.ssl.internal.trust-certificates=" + sec + "/ca.pem"};
  };
  auto with = [](std::vector<std::string> argv,
                 const std::vector<std::string>& more) {
    argv.insert(argv.end(), more.begin(), more.end());
    return argv;
  };
  running_process master{jobmanager_on(hosts, "jm", dir, flags("jm"))};
  std::string address = listening_address(master);
  REQUIRE_FALSE(address.empty());
  auto rest = rest_address(master);
  std::vector<std::unique_ptr<running_process>> workers;
  for (auto name : {"a", "b"})
    workers.push_back(std::make_unique<running_process>(hosts.on(
      name, with({weir, "taskmanager", "-m", address, "--slots", "1", "--id",
                  std::string{"tm-"} + name,
                  "-Dtaskmanager.host=" + hosts.address(name)},
                 flags(name)))));
  REQUIRE(master.wait_for_stderr("TaskExecutor tm-a registered", 30s));
  REQUIRE(master.wait_for_stderr("TaskExecutor tm-b registered", 30s));
  auto text = numbered_lines(400000, 40); // 16 MB
  auto input = dir.write("in.txt", text);
  auto out = dir.file("out.txt");
  auto spec = dir.write(
    "lines.json",
    fmt::format(R"({{"name": "lines", "parallelism": 2,
      "vertices": [
        {{"id": "read", "operator": "text_file", "params": {{"path": "{}"}}}},
        {{"id": "write", "operator": "text_file", "params": {{"path": "{}"}},
          "parallelism": 1}}],
      "edges": [{{"from": "read", "to": "write",
                  "partitioning": "rebalance"}}]}})",
                input, out));
  auto before = io_bytes(master.pid());
  // The client: with TLS the REST API is HTTPS, and a node certificate
  // from the CA is one a client may show.
  auto r = run_process(hosts.on("jm", with({weir, "run", "-m", rest, spec},
                                           tls ? flags("jm")
                                               : std::vector<std::string>{})),
                       120s);
  auto carried = io_bytes(master.pid()) - before;
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(sorted_lines(read_file(out)) == lines_of(text));
  // Each reader reads half the file (its split); the writer's worker
  // reads its own half locally, the other half crosses.
  auto crossed = static_cast<long long>(text.size() / 2);
  MESSAGE("the jobmanager read and wrote " << carried << " bytes while "
                                           << crossed
                                           << " bytes crossed between the "
                                              "workers");
  CHECK(carried < crossed / 100);
  for (auto& w : workers) {
    w->signal(SIGTERM);
    CHECK(w->finish(30s).exit_code == 0);
  }
  master.signal(SIGTERM);
  CHECK(master.finish(30s).exit_code == 0);
}

} // namespace

TEST_CASE("taskmanagers in two namespaces exchange batches directly, not "
          "through the jobmanager") {
  exchange_directly(false);
}

TEST_CASE("with TLS, taskmanagers exchange batches directly over their "
          "node certificates") {
  exchange_directly(true);
}

TEST_CASE("a worker that cannot reach a peer's data port fails the job with "
          "one line naming the address and the keys") {
  auto lan_or_none = hosts_or_skip({"a", "b"});
  if (!lan_or_none)
    return;
  auto& hosts = *lan_or_none;
  std::string weir = std::getenv("WEIR_BIN");
  temp_dir dir;
  running_process master{jobmanager_on(hosts, "a", dir)};
  std::string address = listening_address(master);
  REQUIRE_FALSE(address.empty());
  auto rest = rest_address(master);
  // Worker b's data port is on its namespace's loopback, which worker a
  // cannot reach (tm-a has the smaller id: it dials).
  std::vector<std::unique_ptr<running_process>> workers;
  workers.push_back(std::make_unique<running_process>(hosts.on(
    "a", {weir, "taskmanager", "-m", address, "--slots", "1", "--id", "tm-a",
          "-Dtaskmanager.host=" + hosts.address("a"),
          "-Dsecurity.ssl.internal.enabled=false"})));
  workers.push_back(std::make_unique<running_process>(hosts.on(
    "b", {weir, "taskmanager", "-m", address, "--slots", "1", "--id", "tm-b",
          "-Dtaskmanager.data.port=0"})));
  REQUIRE(master.wait_for_stderr("TaskExecutor tm-a registered", 30s));
  REQUIRE(master.wait_for_stderr("TaskExecutor tm-b registered", 30s));
  auto input = dir.write("in.txt", numbered_lines(100000, 20));
  auto r = run_process(hosts.on("a", {weir, "run", "-m", rest,
                                      "examples/wordcount.json", "-p", "2",
                                      "--input", input, "--output",
                                      dir.file("out.txt"),
                                      "-Drestart-strategy.type=none"}),
                       120s);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("cannot reach the data port 127.0.0.1:") != std::string::npos);
  CHECK(r.err.find("(taskmanager.host, taskmanager.data.port of its "
                   "taskmanager): Connection refused")
        != std::string::npos);
  for (auto& w : workers) {
    w->signal(SIGTERM);
    w->finish(30s);
  }
  master.signal(SIGTERM);
  CHECK(master.finish(30s).exit_code == 0);
}
