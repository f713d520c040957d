// A session cluster across two network namespaces joined by virtual links:
// the jobmanager and one worker in one namespace, a worker and the client in
// the other, so records and control messages cross a real (virtual) network.
// Needs root and iproute2; skipped with a visible message otherwise.
#include <doctest/doctest.h>

#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "netns.hpp"
#include "process.hpp"
#include "reference.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

TEST_CASE("word count across two network namespaces") {
  if (geteuid() != 0) {
    MESSAGE("SKIPPED: network namespaces need root");
    return;
  }
  lan hosts{{"a", "b"}};
  if (!hosts.ok()) {
    MESSAGE("SKIPPED: cannot make network namespaces: " << hosts.problem());
    return;
  }
  std::string weir = std::getenv("WEIR_BIN");
  temp_dir dir;
  // Not loopback: the jobmanager wants an explicit TLS decision.
  running_process master{hosts.on(
    "a", {weir, "jobmanager", "--host", hosts.address("a"), "--port", "0",
              "--state-dir", dir.file("state"),
              "-Dsecurity.ssl.internal.enabled=false",
              "-Drest.bind-address=" + hosts.address("a"), any_rest_port,
              "-Dsecurity.ssl.rest.authentication-enabled=false"})};
  std::string address = listening_address(master);
  REQUIRE_FALSE(address.empty());
  auto rest = rest_address(master);
  REQUIRE(rest.rfind(hosts.address("a") + ":", 0) == 0);
  running_process near{hosts.on(
    "a", {weir, "taskmanager", "-m", address, "--slots", "2", "--id",
              "tm-a"})};
  running_process far{hosts.on(
    "b", {weir, "taskmanager", "-m", address, "--slots", "2", "--id",
              "tm-b"})};
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
