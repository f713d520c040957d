// A session cluster across two network namespaces joined by a veth pair:
// the jobmanager and one worker in one namespace, a worker and the client in
// the other, so records and control messages cross a real (virtual) link.
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

namespace {

/// Two namespaces and a veth pair between them; removed on destruction.
struct two_hosts {
  std::string a;
  std::string b;
  std::string addr_a;
  std::string addr_b;
  std::string problem; ///< why they could not be made
  bool made_a = false;
  bool made_b = false;

  two_hosts() {
    auto tag = std::to_string(getpid());
    a = "weir-a-" + tag;
    b = "weir-b-" + tag;
    auto subnet = fmt::format("10.231.{}", getpid() % 250 + 1);
    addr_a = subnet + ".1";
    addr_b = subnet + ".2";
    if (auto r = ip({"netns", "add", a}); r.exit_code != 0) {
      problem = r.err.empty() ? "ip netns add failed" : r.err;
      return;
    }
    made_a = true;
    if (auto r = ip({"netns", "add", b}); r.exit_code != 0) {
      problem = r.err;
      return;
    }
    made_b = true;
    auto va = "wva" + tag;
    auto vb = "wvb" + tag;
    std::vector<std::vector<std::string>> steps{
      {"link", "add", va, "type", "veth", "peer", "name", vb},
      {"link", "set", va, "netns", a},
      {"link", "set", vb, "netns", b},
      {"-n", a, "addr", "add", addr_a + "/24", "dev", va},
      {"-n", b, "addr", "add", addr_b + "/24", "dev", vb},
      {"-n", a, "link", "set", va, "up"},
      {"-n", b, "link", "set", vb, "up"},
      {"-n", a, "link", "set", "lo", "up"},
      {"-n", b, "link", "set", "lo", "up"}};
    for (auto& s : steps) {
      if (auto r = ip(s); r.exit_code != 0) {
        problem = fmt::format("ip {}: {}", fmt::join(s, " "), r.err);
        return;
      }
    }
  }

  ~two_hosts() {
    if (made_a)
      ip({"netns", "del", a});
    if (made_b)
      ip({"netns", "del", b});
  }

  bool ok() const { return problem.empty(); }

  /// A command line that runs `args` inside namespace `ns`.
  static std::vector<std::string> in(const std::string& ns,
                                     std::vector<std::string> args) {
    return in_namespace(ns, std::move(args));
  }
};

} // namespace

TEST_CASE("word count across two network namespaces") {
  if (geteuid() != 0) {
    MESSAGE("SKIPPED: network namespaces need root");
    return;
  }
  two_hosts hosts;
  if (!hosts.ok()) {
    MESSAGE("SKIPPED: cannot make network namespaces: " << hosts.problem);
    return;
  }
  std::string weir = std::getenv("WEIR_BIN");
  temp_dir dir;
  // Not loopback: the jobmanager wants an explicit TLS decision.
  running_process master{two_hosts::in(
    hosts.a, {weir, "jobmanager", "--host", hosts.addr_a, "--port", "0",
              "--state-dir", dir.file("state"),
              "-Dsecurity.ssl.internal.enabled=false"})};
  std::string address = listening_address(master);
  REQUIRE_FALSE(address.empty());
  running_process near{two_hosts::in(
    hosts.a, {weir, "taskmanager", "-m", address, "--slots", "2", "--id",
              "tm-a"})};
  running_process far{two_hosts::in(
    hosts.b, {weir, "taskmanager", "-m", address, "--slots", "2", "--id",
              "tm-b"})};
  REQUIRE(master.wait_for_stderr("TaskExecutor tm-a registered", 30s));
  REQUIRE(master.wait_for_stderr("TaskExecutor tm-b registered", 30s));
  auto text = random_text(23, 20000);
  auto input = dir.write("in.txt", text);
  auto out = dir.file("counts.txt");
  auto r = run_process(two_hosts::in(
                         hosts.b, {weir, "run", "-m", address,
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
