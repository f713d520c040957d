// Mutual TLS and the guard in front of CAF's protocol, through real
// processes on loopback: an exact job over TLS; clients without a trusted
// certificate refused with one line and exit 3 while the cluster serves;
// the headers that crashed or exhausted nodes closed before anything is
// allocated; loopback-only listeners; handshake deadline and pending cap.
#include <doctest/doctest.h>

#include <algorithm>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "cluster_fixture.hpp"
#include "process.hpp"
#include "raw_peer.hpp"
#include "reference.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

/// `flags` and a REST API on a free port (always there, so that the
/// listeners to expect do not depend on whether 8081 is free).
std::vector<std::string> with_rest(std::vector<std::string> flags) {
  flags.push_back("-Drest.port=0");
  return flags;
}

/// A session cluster whose jobmanager and taskmanagers all get `flags`.
struct cluster : session_cluster {
  explicit cluster(const std::vector<std::string>& flags)
    : session_cluster(with_rest(flags), flags) {
  }

  /// "ADDRESS:PORT" of the jobmanager's REST API (HTTP: not a BASP port).
  std::string rest_address() {
    if (!jobmanager->wait_for_stderr("REST API at http", 30s)
        || !jobmanager->wait_for_stderr("\n", 30s))
      return {};
    std::smatch m;
    const auto& log = jobmanager->stderr_so_far();
    if (!std::regex_search(log, m,
                           std::regex{"REST API at https?://([0-9.]+:[0-9]+)\n"}))
      return {};
    return m[1];
  }

  std::vector<running_process*> nodes() {
    std::vector<running_process*> all{jobmanager.get()};
    for (auto& w : workers)
      all.push_back(w.get());
    return all;
  }
};

/// "ADDRESS:PORT" of every TCP socket process `pid` listens on (ss).
std::vector<std::string> listeners_of(int pid) {
  auto r = run_process({"/usr/bin/ss", "-ltnpH"}, 30s);
  REQUIRE(r.exit_code == 0);
  std::vector<std::string> found;
  std::regex line{R"(^LISTEN\s+\d+\s+\d+\s+(\S+)\s+.*pid=(\d+),)"};
  for (auto& l : lines_of(r.out)) {
    std::smatch m;
    if (std::regex_search(l, m, line) && std::stoi(m[2]) == pid)
      found.push_back(m[1]);
  }
  return found;
}

/// Connects, sends `bytes`, and returns whether the node closed the
/// connection (within 10 s).
bool sent_and_closed(const std::string& address, const std::string& bytes) {
  int fd = connect_to(address);
  CHECK(send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL)
        == static_cast<ssize_t>(bytes.size()));
  auto closed = closed_by_peer(fd, 10s);
  close(fd);
  return closed;
}

/// A 32-byte BASP header (CAF 0.17.6: operation, 2 padding bytes, flags,
/// payload length, operation data, source and destination actor; network
/// byte order).
std::string basp_header(uint8_t operation, uint32_t payload,
                        uint64_t dest_actor) {
  std::string h(32, '\0');
  h[0] = static_cast<char>(operation);
  for (int i = 0; i < 4; ++i)
    h[4 + i] = static_cast<char>(payload >> (24 - 8 * i));
  for (int i = 0; i < 8; ++i)
    h[24 + i] = static_cast<char>(dest_actor >> (56 - 8 * i));
  return h;
}

/// The two headers that crashed (a client handshake without payload) and
/// exhausted (a message announcing ~4 GiB) nodes before this guard, sent
/// four times each to every port each node listens on (the data ports
/// refuse them as frames before a hello). Afterwards every
/// node is up, the jobmanager's memory has not grown, and a job runs.
void attack_every_port(cluster& c, const std::vector<std::string>& client) {
  auto jm = c.jobmanager->pid();
  auto rss_before = rss_kib(jm);
  auto crash = basp_header(0x01, 0, 0);
  auto exhaust = basp_header(0x02, 0xfffffff0u, 1);
  int ports = 0;
  auto rest = c.rest_address();
  REQUIRE_FALSE(rest.empty());
  for (auto* node : c.nodes()) {
    for (auto& address : listeners_of(node->pid())) {
      if (address == rest)
        continue; // HTTP (tests/integration/rest_test.cpp)
      ++ports;
      for (int i = 0; i < 4; ++i) {
        CHECK(sent_and_closed(address, crash));
        CHECK(sent_and_closed(address, exhaust));
      }
    }
  }
  // The jobmanager's RPC port and each taskmanager's data port.
  CHECK(ports == static_cast<int>(c.nodes().size()));
  for (auto* node : c.nodes())
    CHECK(alive(node->pid()));
  CHECK(rss_kib(jm) < rss_before + 64 * 1024);
  auto r = c.client({"run", "examples/collect.json", "--to", "6"}, client);
  CHECK(r.exit_code == 0);
  CHECK(r.out == "2\n4\n6\n");
}

} // namespace

TEST_CASE("an exact word count over TLS through a jobmanager and two "
          "taskmanagers") {
  certificates certs;
  cluster c{certs.flags(certs.ca, "node")};
  CHECK(c.jobmanager->stderr_so_far().find("with TLS") != std::string::npos);
  c.add_worker("tm-1", 2);
  c.add_worker("tm-2", 2);
  auto text = random_text(5, 20000);
  auto input = c.dir.write("in.txt", text);
  auto out = c.dir.file("counts.txt");
  auto r = c.client({"run", "examples/wordcount.json", "-p", "4", "--input",
                     input, "--output", out},
                    certs.flags(certs.ca, "client"));
  REQUIRE(r.exit_code == 0);
  CHECK(sorted_lines(read_file(out)) == as_lines(reference_word_counts(text)));
}

TEST_CASE("clients without a trusted certificate are refused with one "
          "line; the cluster keeps serving") {
  certificates certs;
  cluster c{certs.flags(certs.ca, "node")};
  c.add_worker("tm-1", 1);
  // Clients talk to the REST API: HTTPS with the cluster's certificates.
  auto plain = c.client({"list"});
  CHECK(plain.exit_code == 3);
  CHECK(plain.out.empty());
  CHECK(plain.err
        == fmt::format("weir list: cannot reach the jobmanager's REST API at "
                       "http://{}: the REST API there is HTTPS: set "
                       "security.ssl.internal.enabled: true (or "
                       "security.ssl.rest.enabled) with a certificate from "
                       "its CA (docs/security.md § Clients), or give -m "
                       "https://HOST:PORT\n",
                       c.rest));
  // What the server would refuse a certificate for, the client says before
  // it connects (exit 2: its configuration): the server's alert may come
  // after the connection broke off.
  auto own = [&](const std::string& dir, const std::string& name,
                 const std::string& why) {
    auto r = c.client({"list"}, certs.flags(dir, name));
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    auto expected = fmt::format("weir list: security.ssl.internal.certificate: "
                                "{}/{}.pem: {}",
                                dir, name, why);
    CHECK_MESSAGE(r.err.rfind(expected, 0) == 0, r.err);
  };
  own(certs.other, "client",
      "not issued by a CA of security.ssl.internal.trust-certificates "
      "(unable to get local issuer certificate)\n");
  own(certs.ca, "expired", "expired on ");
  own(certs.ca, "future", "not valid before ");
  auto ok = c.client({"run", "examples/collect.json", "--to", "4"},
                     certs.flags(certs.ca, "client"));
  CHECK(ok.exit_code == 0);
  CHECK(ok.out == "2\n4\n");
}

TEST_CASE("a TLS client of a jobmanager without TLS is told so") {
  certificates certs;
  cluster c{{}};
  auto r = c.client({"list"}, certs.flags(certs.ca, "client"));
  CHECK(r.exit_code == 3);
  CHECK(r.err == fmt::format("weir list: cannot reach the jobmanager's REST "
                             "API at https://{}: TLS handshake failed: the "
                             "server does not use TLS (give -m "
                             "http://HOST:PORT, or turn TLS off on this "
                             "side)\n",
                             c.rest));
}

TEST_CASE("the headers that crashed or exhausted nodes are closed before "
          "anything is allocated, with TLS") {
  certificates certs;
  cluster c{certs.flags(certs.ca, "node")};
  c.add_worker("tm-1", 1);
  c.add_worker("tm-2", 1);
  attack_every_port(c, certs.flags(certs.ca, "client"));
}

TEST_CASE("the headers that crashed or exhausted nodes are closed before "
          "anything is allocated, without TLS") {
  cluster c{{}};
  c.add_worker("tm-1", 1);
  c.add_worker("tm-2", 1);
  attack_every_port(c, {});
  CHECK(c.jobmanager->wait_for_stderr(
    "refused a connection from 127.0.0.1: a handshake without payload", 10s));
}

TEST_CASE("told 127.0.0.1, no node listens on any other address") {
  cluster c{{"-Djobmanager.rpc.address=127.0.0.1"}};
  c.add_worker("tm-1", 1);
  auto jm = listeners_of(c.jobmanager->pid());
  std::sort(jm.begin(), jm.end());
  auto expected = std::vector<std::string>{c.address, c.rest_address()};
  std::sort(expected.begin(), expected.end());
  CHECK(jm == expected); // RPC and REST, both on 127.0.0.1
  // A taskmanager: its data port (taskmanager.host: 127.0.0.1) alone.
  auto tm = listeners_of(c.workers.front()->pid());
  REQUIRE(tm.size() == 1);
  CHECK(tm.front().rfind("127.0.0.1:", 0) == 0);
}

TEST_CASE("connections that do not finish their handshake are closed; "
          "beyond the pending cap at once") {
  cluster c{{"-Dsecurity.ssl.internal.handshake-timeout=1 s",
             "-Dsecurity.max-pending-connections=3"}};
  c.add_worker("tm-1", 1);
  std::vector<int> idle;
  for (int i = 0; i < 3; ++i)
    idle.push_back(connect_to(c.address));
  // Each is accepted (and counted) once the server sent its handshake.
  char buf[512];
  for (int fd : idle)
    CHECK(recv(fd, buf, sizeof buf, 0) > 0);
  int over = connect_to(c.address);
  CHECK(closed_by_peer(over, 10s));
  close(over);
  for (int fd : idle) {
    CHECK(closed_by_peer(fd, 10s));
    close(fd);
  }
  auto r = c.client({"run", "examples/collect.json", "--to", "2"}, {});
  CHECK(r.exit_code == 0);
  CHECK(r.out == "2\n");
  CHECK(c.jobmanager->wait_for_stderr(
    "connections are in their handshake (security.max-pending-connections)",
    10s));
  CHECK(c.jobmanager->wait_for_stderr(
    "no handshake within 1000 ms (security.ssl.internal.handshake-timeout)",
    10s));
}

TEST_CASE("driver mode over TLS: the application cluster runs the driver "
          "and ends cleanly") {
  certificates certs;
  temp_dir tmp;
  std::vector<std::string> args{"run", "-D"};
  for (auto& flag : certs.flags(certs.ca, "node"))
    args.push_back(flag);
  args.insert(args.end(),
              {"-c", "top_words", "--libjars", std::getenv("WEIR_EXAMPLE_OPS"),
               std::getenv("WEIR_EXAMPLE_DRIVER"),
               source_path("examples/data/sample.txt"), "3"});
  // Each run ends its cluster's connections; none may end a process with
  // SIGPIPE (exit 141 of the application cluster).
  for (int i = 0; i < 3; ++i) {
    auto r = run_weir(args, 120s);
    INFO("weir run -D said: " << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == "the\t8\nhe\t5\nand\t4\n");
    CHECK(r.err.find("ended with code") == std::string::npos);
  }
}

TEST_CASE("a jobmanager or taskmanager with a client certificate does not "
          "start") {
  certificates certs;
  for (auto* action : {"jobmanager", "taskmanager"}) {
    std::vector<std::string> args{action, "--port", "0"};
    if (std::string{action} == "taskmanager")
      args = {action, "-m", "127.0.0.1:1"};
    for (auto& flag : certs.flags(certs.ca, "client"))
      args.push_back(flag);
    auto r = run_weir(args, 30s);
    CHECK(r.exit_code == 2);
    // The first line (the log's copy follows).
    CHECK(r.err.substr(0, r.err.find('\n') + 1)
          == fmt::format("weir {}: security.ssl.internal.certificate: "
                         "{}/client.pem: not a node certificate (its OU is "
                         "'weir-client', a jobmanager or taskmanager needs "
                         "OU=weir-node: weir cert node)\n",
                         action, certs.ca));
  }
}
