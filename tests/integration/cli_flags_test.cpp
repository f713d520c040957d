// The real binary's command lines: every action takes --config and -D
// (weir cert neither), no flag is read as another, weir's flags go anywhere
// after the action, parallelism.default is -p's key, errors name the key
// and where its value came from. run_test checks --help.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <regex>
#include <string>
#include <vector>

#include "config/build_features.hpp"
#include "cluster_fixture.hpp"
#include "process.hpp"
#include "refusal.hpp"

using namespace weir::test;
using namespace std::chrono_literals;

namespace {

const std::string some_job = std::string(32, 'a');

/// Every action with arguments that get past its flags and then fail (or
/// succeed) in a known way without a cluster: action, arguments, and the
/// start of the one line it prints on stderr ("" when it succeeds).
struct probe {
  std::vector<std::string> args;
  std::string err_start;
};

std::vector<probe> probes(const std::string& config) {
  std::vector<std::string> both{"--config", config, "-Dheartbeat.timeout=2s"};
  auto with = [&](std::vector<std::string> args) {
    args.insert(args.begin() + 1, both.begin(), both.end());
    return args;
  };
  std::vector<probe> out{
    {with({"run", "examples/collect.json", "--to", "4"}), ""},
    {with({"info", "examples/collect.json"}), ""},
    {with({"jobmanager", "--port", "99999"}),
     "weir jobmanager: --port 99999: key 'jobmanager.rpc.port'"},
    {with({"taskmanager", "-m", "nohostport"}),
     "weir taskmanager: -m 'nohostport' is not HOST:PORT"},
    {with({"list", "-m", "nohostport"}),
     "weir list: -m 'nohostport' is not HOST:PORT"},
    {with({"savepoint", "-d", "/nonexistent/savepoint"}),
     "weir savepoint: -d: "},
    {with({"repair-state"}), "weir repair-state: missing --state-dir DIR"},
  };
  for (auto action : {"status", "wait", "cancel", "checkpoint", "savepoint",
                      "stop"})
    out.push_back({with({action, "-m", "nohostport", some_job}),
                   fmt::format("weir {}: -m 'nohostport' is not HOST:PORT",
                               action)});
  auto driver = with({"run", "-c", "nope", std::getenv("WEIR_EXAMPLE_DRIVER")});
  driver.insert(driver.begin() + 1, "-D");
  out.push_back({driver, "weir run: -c/--class: no driver 'nope'"});
  return out;
}

} // namespace

TEST_CASE("every action but cert takes --config FILE and -Dkey=value") {
  temp_dir dir;
  auto config = dir.write("weir.yaml", "heartbeat.timeout: 4 s\n");
  for (auto& p : probes(config)) {
    CAPTURE(fmt::format("{}", fmt::join(p.args, " ")));
    auto r = run_weir(p.args, 60s);
    CHECK(r.err.find("unknown flag") == std::string::npos);
    CHECK(r.out.find("Usage:") == std::string::npos); // not read as -h
    if (p.err_start.empty()) {
      CHECK(r.exit_code == 0);
    } else {
      CHECK(r.exit_code == 2);
      CHECK(r.err.rfind(p.err_start, 0) == 0);
      CHECK(r.err.find('\n') == r.err.size() - 1); // one line
    }
  }
  // weir cert reads no configuration, and says so by refusing the flags.
  expect_refused({"cert", "ca", "--dir", dir.file("ca"),
                  "-Dheartbeat.timeout=2s"},
                 "weir cert: unknown flag '-Dheartbeat.timeout=2s' (see weir "
                 "cert --help)");
  CHECK_FALSE(exists(dir.file("ca")));
}

TEST_CASE("a word with a letter that is no flag is refused, never read as -h") {
  for (std::vector<std::string> args :
       {std::vector<std::string>{"info", "examples/collect.json", "-xhelp"},
        {"run", "-xhelp", "examples/collect.json"},
        {"list", "-xhelp"},
        {"status", "-xhelp", some_job},
        {"jobmanager", "-xhelp"},
        {"taskmanager", "-xhelp"},
        {"repair-state", "-xhelp"},
        {"savepoint", "-xhelp"},
        {"cert", "ca", "-xhelp"}}) {
    CAPTURE(args.front());
    auto r = run_weir(args, 60s);
    CHECK(r.exit_code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("unknown flag '-xhelp'") != std::string::npos);
  }
  // -D takes its value attached: -Dheartbeat... is never -h.
  auto info = run_weir({"info", "examples/collect.json",
                        "-Dheartbeat.timeout=2s"});
  CHECK(info.exit_code == 0);
  CHECK(info.out.rfind("Job 'collect'", 0) == 0);
}

TEST_CASE("weir run: weir's own flags after the spec, job parameters too") {
  auto r = run_weir({"run", "examples/collect.json", "--to", "4", "-b",
                     "--disableSubmitOptimization", "--slots", "2", "-p",
                     "2"});
  CHECK(r.err.find("unknown flag") == std::string::npos);
  CHECK(r.exit_code == 0);
  CHECK(sorted_lines(r.out) == std::vector<std::string>{"2", "4"});
  auto user = run_weir({"run", "examples/collect.json", "--to", "2",
                        "--libjars", std::getenv("WEIR_EXAMPLE_OPS"), "-b"});
  CHECK(user.exit_code == 0);
  CHECK(user.out == "2\n");
}

TEST_CASE("parallelism.default is the key of -p: file, -D, flag") {
  temp_dir dir;
  auto plan = [](std::vector<std::string> extra) {
    std::vector<std::string> args{"info", "examples/collect.json"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run_weir(args, 60s);
    CHECK(r.exit_code == 0);
    return r.out;
  };
  CHECK(plan({}).find("parallelism 1") != std::string::npos);
  CHECK(plan({"-Dparallelism.default=3"}).find("parallelism 3")
        != std::string::npos);
  auto config = dir.write("weir.yaml", "parallelism.default: 4\n");
  CHECK(plan({"--config", config}).find("parallelism 4") != std::string::npos);
  CHECK(plan({"--config", config, "-p", "2"}).find("parallelism 2")
        != std::string::npos);
  // weir run: the key sets the job's parallelism (a cluster of 1 slot is
  // too small for 2).
  expect_refused({"run", "examples/collect.json", "-Dparallelism.default=2",
                  "--slots", "1"},
                 "weir run: the job needs 2 slots (its highest parallelism) "
                 "but minicluster.number-of-taskmanagers 1 (default) x "
                 "taskmanager.numberOfTaskSlots 1 (--slots 1) give 1");
  expect_refused({"run", "examples/collect.json", "-p", "0"},
                 "weir run: -p 0: key 'parallelism.default': expected a value "
                 "in [1, 32768], got '0'");
}

TEST_CASE("parallelism.default with -m: the job on the session has it") {
  one_worker_cluster c;
  temp_dir dir;
  auto spec = dir.write("forever.json", R"({
    "name": "forever",
    "vertices": [
      {"id": "events", "operator": "generator", "params": {"rate": 100}},
      {"id": "sink", "operator": "discard"}],
    "edges": [{"from": "events", "to": "sink"}]})");
  auto submitted = run_weir({"run", "-m", c.rest, "-d", spec,
                             "-Dparallelism.default=2"});
  REQUIRE(submitted.exit_code == 0);
  auto id = submitted.out.substr(0, 32);
  std::string status;
  CHECK(eventually([&] {
    status = run_weir({"status", "-m", c.rest, id}, 30s).out;
    return status.find("2/2") != std::string::npos;
  }));
  CHECK(status.find("1/2") != std::string::npos);
  CHECK(status.find("2/2") != std::string::npos);
  CHECK(run_weir({"cancel", "-m", c.rest, id}, 30s).exit_code == 0);
}

TEST_CASE("errors name the key and where its value came from") {
  temp_dir dir;
  auto config = dir.write("weir.yaml", "# one slot\n"
                                       "taskmanager.numberOfTaskSlots: 1\n");
  expect_refused({"run", "examples/wordcount.json", "--config", config, "-p",
                  "2", "--output", dir.file("out")},
                 "weir run: the job needs 2 slots (its highest parallelism) "
                 "but minicluster.number-of-taskmanagers 1 (default) x "
                 "taskmanager.numberOfTaskSlots 1 (" + config + ":2) give 1");
  CHECK_FALSE(exists(dir.file("out")));
  expect_refused({"run", "examples/wordcount.json",
                  "-Dtaskmanager.numberOfTaskSlots=0"},
                 "weir run: -Dtaskmanager.numberOfTaskSlots=0: key "
                 "'taskmanager.numberOfTaskSlots': expected a value in [1, "
                 "32768], got '0'");
  expect_refused({"list", "-Djobmanager.rpc.address="},
                 "weir list: jobmanager.rpc.address '' "
                 "(-Djobmanager.rpc.address=) and rest.port 8081 "
                 "(default) give ':8081', which is not HOST:PORT (no -m "
                 "given)");
}

TEST_CASE("weir --version prints the version, test hooks and allocator") {
  std::string hooks = WEIR_FAULT_INJECTION
                        ? "compiled in (-Dfault_injection=true; a test "
                          "build, not for production)"
                        : "not compiled in";
  // mimalloc's version is the installed library's (mi_version).
  std::string allocator = WEIR_MIMALLOC ? "mimalloc \\d+\\.\\d+\\.\\d+"
                                        : "the system's malloc";
  for (auto flag : {"--version", "-v", "version"}) {
    auto r = run_weir({flag}, 30s);
    CHECK(r.exit_code == 0);
    auto head = std::string{"weir "} + WEIR_VERSION
                + "\ntest hooks (weir.fault.*): " + hooks
                + "\nmemory allocator: ";
    CHECK(r.out.substr(0, head.size()) == head);
    CHECK(std::regex_match(r.out.substr(std::min(head.size(), r.out.size())),
                           std::regex{allocator + "\n"}));
    CHECK(r.err.empty());
  }
}

TEST_CASE("a taskmanager that reaches no jobmanager gives up with code 6") {
  // Code 5 is a jobmanager's lost leadership: each exit code has one
  // meaning (docs/operations.md § Exit codes).
  auto address = "127.0.0.1:" + std::to_string(free_port());
  auto r = run_weir({"taskmanager", "-m", address,
                     "-Dtaskmanager.registration.timeout=1 s",
                     "-Dcluster.registration.max-timeout=200 ms"});
  CHECK(r.exit_code == 6);
  CHECK(r.err.find("giving up: no jobmanager reachable for 1000 ms "
                   "(taskmanager.registration.timeout)")
        != std::string::npos);
}
