#pragma once

// A one-member etcd (Debian's etcd-server) for the high-availability tests.
// Its log goes to a file, never to a pipe a test might stop reading (etcd
// would block on a full one).

#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "process.hpp"

namespace weir::test {

constexpr const char* etcd_program = "/usr/bin/etcd";

/// Whether etcd is installed.
inline bool have_etcd() {
  return ::access(etcd_program, X_OK) == 0;
}

/// etcd serving clients at HOST:CLIENT_PORT, its data and log in `dir`; run
/// through `wrap` (e.g. inside a network namespace: "ip netns exec NS").
class etcd_server {
public:
  etcd_server(const temp_dir& dir, const std::string& host, int client_port,
              int peer_port, std::vector<std::string> wrap = {})
    : address_(host + ":" + std::to_string(client_port)),
      log_(dir.file("etcd.log")) {
    auto url = "http://" + address_;
    auto peer = "http://127.0.0.1:" + std::to_string(peer_port);
    auto command = fmt::format(
      "exec {} --data-dir {} --listen-client-urls {} --advertise-client-urls "
      "{} --listen-peer-urls {} --initial-advertise-peer-urls {} "
      "--initial-cluster default={} 2>{}",
      etcd_program, dir.file("etcd-data"), url, url, peer, peer, peer, log_);
    wrap.insert(wrap.end(), {"/bin/sh", "-c", command});
    proc_ = std::make_unique<running_process>(wrap);
    REQUIRE(eventually([&] {
      return read_file(log_).find("ready to serve client requests")
             != std::string::npos;
    }));
  }

  /// HOST:PORT of its client URL.
  const std::string& address() const { return address_; }

  running_process& process() { return *proc_; }

private:
  std::string address_;
  std::string log_;
  std::unique_ptr<running_process> proc_;
};

} // namespace weir::test
