// libFuzzer target: arbitrary bytes as a peer's stream on one connection,
// read as CAF's BASP reads it (a 32-byte header, then the payload it
// announced), through the guard (net/basp_guard) and, for each message
// the guard lets through to this node, the same deserialization BASP
// runs next with this process's types (net/message_check). Whatever the
// bytes, neither may crash, hang or allocate beyond the payload it reads.
// Run by fuzz/run (docs/security.md § Fuzzing).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include "messages/type_ids.hpp"
#include "net/basp_guard.hpp"
#include "net/message_check.hpp"
#include "tests/basp_frames.hpp"

namespace {

namespace basp = weir::test::basp;
using weir::net::basp_guard;

struct node_fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<weir::net::message_check> messages;
  caf::node_id peer;

  node_fixture() {
    weir::add_message_types(cfg);
    cfg.set("scheduler.max-threads", 1);
    cfg.set("logger.console", caf::atom("none"));
    sys = std::make_unique<caf::actor_system>(cfg);
    messages = std::make_unique<weir::net::message_check>(*sys);
    std::mt19937_64 rng{1};
    peer = basp::random_node(rng);
  }
};

/// Never destroyed: CAF's threads end with the process.
node_fixture& fixture() {
  static auto* f = new node_fixture;
  return *f;
}

/// Seeds: a handshake and one frame of each shape weir's peers send.
void write_seeds(const std::string& dir) {
  auto& f = fixture();
  auto hello = basp::client_hello(f.peer);
  auto str = basp::message_payload("@<>+@str",
                                   basp::serialized(std::string{"hello"}));
  std::vector<std::string> frames{
    basp::direct(1, basp::normal, str, 2),
    basp::direct(1, basp::urgent, basp::message_payload("@<>"), 2),
    basp::direct(1, basp::normal | 0x8000000000000000,
                 basp::message_payload("@<>+@error"), 2),
    basp::direct(3, basp::normal,
                 basp::message_payload("@<>+weir::job_id",
                                       std::string(16, '\1')),
                 2),
    basp::direct(3, basp::normal,
                 basp::message_payload("@<>+weir::task_executor_actor",
                                       basp::serialized(uint64_t{5}, f.peer)),
                 2),
    basp::routed(f.peer, f.sys->node(), 1, basp::normal, str),
    basp::header(basp::heartbeat, 0),
    basp::client_hello(f.peer, basp::select_connection_flag),
  };
  int n = 0;
  for (auto& frame : frames) {
    // First byte: bit 0 the accepted side, bit 1 a handshake done first.
    std::ofstream{dir + "/seed-" + std::to_string(n++), std::ios::binary}
      << '\x03' << frame;
    std::ofstream{dir + "/seed-" + std::to_string(n++), std::ios::binary}
      << '\x01' << hello << frame;
  }
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (auto* dir = std::getenv("WEIR_FUZZ_WRITE_SEEDS")) {
    write_seeds(dir);
    std::_Exit(0);
  }
  fixture();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1)
    return 0;
  auto& f = fixture();
  auto side = (data[0] & 1) != 0 ? basp_guard::side::accepted
                                 : basp_guard::side::connected;
  basp_guard guard{side, 1 << 20, f.sys->node()};
  if ((data[0] & 2) != 0 && side == basp_guard::side::accepted) {
    auto hello = basp::client_hello(f.peer);
    if (guard.check(hello.data(), 32)
        || guard.check(hello.data() + 32, hello.size() - 32))
      std::abort(); // the fixture's own handshake must pass
  }
  auto* p = reinterpret_cast<const char*>(data + 1);
  size_t left = size - 1;
  while (left > 0) {
    size_t n = guard.expected_payload() > 0 ? guard.expected_payload() : 32;
    if (n > left)
      break;
    // Copied: the scribe hands over exactly the bytes read, no more.
    std::vector<char> read(p, p + n);
    if (guard.check(read.data(), read.size()))
      break;
    if (side == basp_guard::side::accepted
        && guard.last_payload() != basp_guard::payload::other
        && f.messages->check(read.data(), read.size(),
                             guard.last_was_routed(), guard.peer()))
      break;
    p += n;
    left -= n;
  }
  return 0;
}
