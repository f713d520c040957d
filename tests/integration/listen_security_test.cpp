// A jobmanager does not listen on the network without an explicit TLS
// decision (security.ssl.internal.enabled set, to true or false).
#include <doctest/doctest.h>

#include <csignal>
#include <cstdlib>
#include <string>
#include <vector>

#include "process.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

std::vector<std::string> jobmanager_argv(const temp_dir& dir,
                                         std::vector<std::string> extra) {
  // REST on any free port: tests run side by side, and one on 8081
  // would make this one warn that it has no REST API.
  std::vector<std::string> argv{std::getenv("WEIR_BIN"), "jobmanager",
                                "--port", "0", "--state-dir",
                                dir.file("state"), "-Drest.port=0"};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

/// Stops a listening jobmanager as an operator would; its exit code.
int stop(running_process& jm) {
  jm.signal(SIGTERM);
  return jm.finish(30s).exit_code;
}

} // namespace

TEST_CASE("a jobmanager refuses 0.0.0.0 without a TLS decision (exit 2)") {
  temp_dir dir;
  auto argv = jobmanager_argv(dir, {"--host", "0.0.0.0"});
  argv.erase(argv.begin()); // run_weir adds the binary
  auto r = run_weir(argv, 60s);
  CHECK(r.exit_code == 2);
  CHECK(r.err
        == "weir jobmanager: refusing to listen on 0.0.0.0 without TLS: set "
           "security.ssl.internal.enabled: true (see docs/security.md), or "
           "false to accept unauthenticated connections from the network\n");
  CHECK_FALSE(exists(dir.file("state"))); // refused before anything opened
}

TEST_CASE("a jobmanager told security.ssl.internal.enabled: false listens on "
          "0.0.0.0 and warns in its log") {
  temp_dir dir;
  running_process jm{jobmanager_argv(
    dir, {"--host", "0.0.0.0", "-Dsecurity.ssl.internal.enabled=false"})};
  auto address = listening_address(jm);
  REQUIRE(address.rfind("0.0.0.0:", 0) == 0);
  CHECK(jm.wait_for_stderr("WARNING: listening on 0.0.0.0 without TLS: "
                           "anyone who can reach this port can run code on "
                           "the cluster\n",
                           30s));
  CHECK(stop(jm) == 0);
}

TEST_CASE("a jobmanager on 127.0.0.1 needs no TLS decision") {
  temp_dir dir;
  running_process jm{jobmanager_argv(dir, {"--host", "127.0.0.1"})};
  REQUIRE(listening_address(jm).rfind("127.0.0.1:", 0) == 0);
  CHECK(stop(jm) == 0);
  CHECK(jm.stderr_so_far().find("WARNING") == std::string::npos);
}

TEST_CASE("a taskmanager's metrics endpoint on 0.0.0.0 says who can read "
          "it") {
  running_process tm{{std::getenv("WEIR_BIN"), "taskmanager", "-m",
                      "127.0.0.1:1", "-Dmetrics.reporter.prom.host=0.0.0.0",
                      "-Dmetrics.reporter.prom.port=0"}};
  CHECK(tm.wait_for_stderr(
    "WARNING: the metrics endpoint on 0.0.0.0 answers everyone who can "
    "reach it (metrics.reporter.prom.host): job and operator names, rates "
    "and this host's load\n",
    30s));
  tm.signal(SIGTERM);
  CHECK(tm.finish(30s).exit_code == 0);
}
