// A taskmanager's data port (docs/security.md § Data port) against peers
// that are not its fellow taskmanagers, through real processes on
// loopback: with TLS only a node certificate's holder gets past the
// handshake and its hello; without TLS only well-formed frames after a
// hello do. Each refused connection is closed, the worker lives, and two
// workers still exchange a job's batches over their data ports.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdlib>
#include <regex>
#include <string>
#include <vector>

#include "cluster_fixture.hpp"
#include "messages/data_frame.hpp"
#include "raw_peer.hpp"
#include "reference.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

/// A session cluster with two one-slot taskmanagers, TLS with the node
/// certificate when `certs` is given.
struct two_workers : session_cluster {
  const certificates* certs;

  explicit two_workers(const certificates* c = nullptr)
    : session_cluster(with(c), with(c)), certs(c) {
    add_worker("tm-1", 1);
    add_worker("tm-2", 1);
  }

  static std::vector<std::string> with(const certificates* c) {
    std::vector<std::string> flags;
    if (c != nullptr)
      flags = c->flags(c->ca, "node");
    return flags;
  }

  /// Worker `i`'s data port, as its log names it.
  std::string data_port(size_t i) {
    auto& w = *workers.at(i);
    REQUIRE(w.wait_for_stderr("data port listening on ", 30s));
    std::smatch m;
    auto text = w.stderr_so_far();
    REQUIRE(std::regex_search(text, m, std::regex{
                                         "data port listening on ([0-9.:]+)"}));
    return m[1];
  }

  /// Both workers are up and a job whose batches cross between them
  /// gives its exact result.
  void still_exchanges() {
    for (auto& w : workers)
      CHECK(alive(w->pid()));
    std::vector<std::string> flags;
    if (certs)
      flags = certs->flags(certs->ca, "client");
    auto text = random_text(7, 20000);
    auto input = dir.write("words.txt", text);
    auto out = dir.file("counts.txt");
    auto r = client({"run", "examples/wordcount.json", "-p", "2", "--input",
                     input, "--output", out},
                    flags);
    CHECK(r.exit_code == 0);
    CHECK(sorted_lines(read_file(out))
          == as_lines(reference_word_counts(text)));
  }
};

std::string hello_frame(const std::string& payload) {
  weir::frame_header h;
  h.kind = weir::frame_kind::hello;
  h.length = static_cast<uint32_t>(payload.size());
  std::string out(weir::frame_header::size, '\0');
  h.write(out.data());
  return out + payload;
}

} // namespace

TEST_CASE("with TLS a data port refuses a client certificate at its hello") {
  certificates certs;
  two_workers c{&certs};
  raw_peer peer{c.data_port(0), certs, "client"};
  peer.send(hello_frame("weir-data/1 intruder"));
  CHECK(peer.closed_within(10s));
  CHECK(c.workers[0]->wait_for_stderr(
    "its certificate is not a node's (OU weir-client): the data port is for "
    "taskmanagers (docs/security.md § Data port)",
    10s));
  c.still_exchanges();
}

TEST_CASE("with TLS a data port refuses a peer without a certificate") {
  certificates certs;
  two_workers c{&certs};
  raw_peer peer{c.data_port(0)};
  peer.send("\x16\x03\x01\x00\x05hello");
  CHECK(peer.closed_within(10s));
  c.still_exchanges();
}

/// Without TLS: a peer sends `bytes` to worker 2's data port; the worker
/// closes the connection, logs `why` and still exchanges.
void refused_without_tls(const std::string& bytes, const std::string& why) {
  two_workers c;
  raw_peer peer{c.data_port(1)};
  peer.send(bytes);
  CHECK(peer.closed_within(10s));
  CHECK(c.workers[1]->wait_for_stderr(why, 10s));
  c.still_exchanges();
}

std::string header_only(weir::frame_kind kind, uint32_t length,
                        int64_t value = 1) {
  weir::frame_header h;
  h.kind = kind;
  h.length = length;
  h.value = value;
  std::string frame(weir::frame_header::size, '\0');
  h.write(frame.data());
  return frame;
}

TEST_CASE("without TLS a data port closes a connection sending garbage") {
  refused_without_tls(std::string(64, '\x7f'),
                      "a frame of an unknown kind, or with reserved bytes set");
}

TEST_CASE("without TLS a data port closes a connection whose first frame "
          "is not a hello") {
  refused_without_tls(header_only(weir::frame_kind::credit, 0),
                      "a frame before its hello");
}

TEST_CASE("without TLS a data port refuses a frame over rpc.max-message-size "
          "before reading it") {
  refused_without_tls(hello_frame("weir-data/1 tm-x")
                        + header_only(weir::frame_kind::batch, 0xffffffffu),
                      "(rpc.max-message-size)");
}

TEST_CASE("a data connection that drops fails the subtasks on both ends; the "
          "job restarts and its result is exact") {
  two_workers c;
  auto port = c.data_port(1); // tm-1 dials tm-2
  // About four seconds of events, hashed to counters on both workers.
  auto spec = c.dir.write("paced.json", R"({"name": "paced", "parallelism": 2,
    "vertices": [
      {"id": "events", "operator": "generator",
       "params": {"count": 4000, "rate": 1000, "keys": 7}},
      {"id": "counts", "operator": "count"},
      {"id": "out", "operator": "collect", "parallelism": 1}],
    "edges": [{"from": "events", "to": "counts", "partitioning": "hash"},
              {"from": "counts", "to": "out", "partitioning": "rebalance"}]})");
  auto want = c.client({"run", spec});
  REQUIRE(want.exit_code == 0);
  running_process job{{std::getenv("WEIR_BIN"), "run", "-m", c.rest, spec}};
  // Cut the workers' data connection until the cut fails a subtask of
  // the job (a cut before its subtasks use the connection only makes them
  // dial again).
  auto peer = "dport = :" + port.substr(port.rfind(':') + 1);
  CHECK(eventually([&] {
    run_process({"/usr/bin/ss", "-K", "state", "established", peer}, 10s);
    return c.jobmanager->wait_for_stderr(
      "lost the data connection to taskmanager tm-", 100ms);
  }));
  auto got = job.finish(120s);
  CHECK(got.exit_code == 0);
  CHECK(sorted_lines(got.out) == sorted_lines(want.out));
}
