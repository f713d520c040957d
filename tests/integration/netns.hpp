#pragma once

// Several "hosts" on one machine: network namespaces joined by a bridge in a
// hub namespace of their own, for tests that need machines with addresses of
// their own (a leader's host that dies, a client elsewhere). Needs root and
// iproute2; tests skip with a visible message otherwise.

#include <unistd.h>

#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "process.hpp"

namespace weir::test {

/// Runs `ip ARGS...`; returns its result.
inline process_result ip(std::vector<std::string> args) {
  args.insert(args.begin(), "/usr/sbin/ip");
  return run_process(args, std::chrono::seconds(30));
}

/// A command line that runs `args` inside network namespace `ns`.
inline std::vector<std::string> in_namespace(const std::string& ns,
                                             std::vector<std::string> args) {
  args.insert(args.begin(), {"/usr/sbin/ip", "netns", "exec", ns});
  return args;
}

/// Hosts `names` (plus "hub", which holds the bridge) on one /24; removed on
/// destruction.
class lan {
public:
  explicit lan(const std::vector<std::string>& names) {
    auto tag = std::to_string(getpid());
    auto subnet = fmt::format("10.232.{}", getpid() % 250 + 1);
    auto hub = add("hub", subnet + ".254");
    if (!ok())
      return;
    for (auto& step : std::vector<std::vector<std::string>>{
           {"-n", hub, "link", "add", "br0", "type", "bridge"},
           {"-n", hub, "addr", "add", subnet + ".254/24", "dev", "br0"},
           {"-n", hub, "link", "set", "br0", "up"}})
      if (!run(step))
        return;
    for (size_t i = 0; i < names.size(); ++i) {
      auto ns = add(names[i], fmt::format("{}.{}", subnet, i + 1));
      if (!ok())
        return;
      // Interface names have at most 15 characters.
      auto end = fmt::format("w{}h{}", getpid() % 1000000, i);
      auto far = fmt::format("w{}n{}", getpid() % 1000000, i);
      for (auto& step : std::vector<std::vector<std::string>>{
             {"link", "add", far, "type", "veth", "peer", "name", end},
             {"link", "set", far, "netns", ns},
             {"link", "set", end, "netns", hub},
             {"-n", ns, "addr", "add", address(names[i]) + "/24", "dev", far},
             {"-n", ns, "link", "set", far, "up"},
             {"-n", hub, "link", "set", end, "master", "br0"},
             {"-n", hub, "link", "set", end, "up"}})
        if (!run(step))
          return;
    }
  }

  ~lan() {
    for (auto& [name, ns] : namespaces_)
      ip({"netns", "del", ns});
  }

  lan(const lan&) = delete;
  lan& operator=(const lan&) = delete;

  /// Whether every namespace and link was made; else why not.
  bool ok() const { return problem_.empty(); }
  const std::string& problem() const { return problem_; }

  /// The address of host `name`.
  std::string address(const std::string& name) const {
    return addresses_.at(name);
  }

  /// A command line that runs `args` on host `name`.
  std::vector<std::string> on(const std::string& name,
                              std::vector<std::string> args) const {
    return in_namespace(namespaces_.at(name), std::move(args));
  }

private:
  /// Adds the namespace of host `name` (its loopback up); its name.
  std::string add(const std::string& name, std::string addr) {
    auto ns = fmt::format("weir-{}-{}", getpid(), name);
    if (!run({"netns", "add", ns}))
      return ns;
    namespaces_[name] = ns;
    addresses_[name] = std::move(addr);
    run({"-n", ns, "link", "set", "lo", "up"});
    return ns;
  }

  bool run(const std::vector<std::string>& step) {
    auto r = ip(step);
    if (r.exit_code != 0 && problem_.empty())
      problem_ = fmt::format("ip {}: {}", fmt::join(step, " "),
                             r.err.empty() ? "failed" : r.err);
    return r.exit_code == 0;
  }

  std::map<std::string, std::string> namespaces_;
  std::map<std::string, std::string> addresses_;
  std::string problem_;
};

} // namespace weir::test
