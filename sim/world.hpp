#pragma once

// The simulated world (docs/simulation.md § The world): one actor system on
// CAF's deterministic test scheduler, its actors grouped into processes
// ("hosts") on machines ("nodes"), and the network between nodes. Each
// step delivers one message, picked by the seed among those deliverable
// now; when none is, virtual time jumps to the next timer, held message or
// fault. Everything a run does follows from its seed.

#include <cstdint>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <caf/actor_clock.hpp>
#include <caf/actor_control_block.hpp>
#include <caf/fwd.hpp>

namespace caf::scheduler {
class test_coordinator;
} // namespace caf::scheduler

namespace weir::sim {

using time_point = caf::actor_clock::time_point;
using duration = caf::timespan;

/// Milliseconds of `d`, for what the simulation prints.
inline int64_t ms(duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

/// Whether `a` is an actor of this name (its state's, "task_executor").
bool named(const caf::scheduled_actor* a, std::string_view name);

/// One message about to be handled, as the observers see it.
struct delivery {
  caf::scheduled_actor* receiver;
  caf::mailbox_element* message;
  int receiver_host;
  int sender_host; ///< -1: no sender (a timeout) or one outside the hosts
};

class world {
public:
  /// A process: the actors one incarnation of a node runs.
  struct host {
    std::string name;
    int node = 0;
    enum class life { up, hung, crashed } state = life::up;
    /// A jobmanager that lost the leadership and does not know yet.
    bool fenced = false;
    std::vector<caf::weak_actor_ptr> actors;
    /// What the harness started: the process's main, alive as long as the
    /// process (nothing else need refer to it).
    std::vector<caf::strong_actor_ptr> roots;
  };

  explicit world(uint64_t seed);
  ~world();

  caf::actor_system& system() { return *sys_; }
  std::mt19937_64& rng() { return rng_; }
  time_point now() const;
  /// Virtual time since the world began.
  duration elapsed() const { return now() - start_; }

  // -- nodes and processes --------------------------------------------------

  /// A machine; its first process starts with start_process.
  int add_node(std::string name);
  /// A new process on `node` (its previous one must be crashed); what
  /// `spawn` spawns runs in it. Returns the host.
  int start_process(int node, const std::function<void()>& spawn);
  /// The process now running on `node` (-1: none since a crash).
  int process_of(int node) const;
  const host& host_at(int h) const { return hosts_[h]; }
  int host_of(caf::actor_id id) const;
  /// The name of an actor that has handled a message ("" before that).
  std::string_view name_of(caf::actor_id id) const;
  /// Ends every actor of `node`'s process at once, as kill -9 does: its
  /// undelivered messages are lost, its peers see it go down.
  void crash(int node);
  /// A process that stops handling messages (and timers) until resumed.
  void hang(int node, bool hung);
  /// `node`'s process lost the leadership (a standby took over).
  void fence(int node);
  bool crashed(int node) const;

  // -- the network ----------------------------------------------------------

  /// Messages between the two sides wait (TCP holds them) until healed.
  void partition(const std::set<int>& side_a, const std::set<int>& side_b);
  void heal_partitions();
  /// Messages between `a` and `b` are lost until `until` (a connection that
  /// broke and was opened again by the next send).
  void lose_connection(int a, int b, time_point until);
  /// Messages from `a` to `b` and back take `extra` longer until `until`.
  void delay_link(int a, int b, duration extra, time_point until);
  /// `node`'s timers and its own messages to itself come `lag` late until
  /// `until` (a clock that runs behind, or a host that is slow).
  void lag_clock(int node, duration lag, time_point until);

  // -- running --------------------------------------------------------------

  /// Delivers one message or, with none deliverable, advances virtual time
  /// to the next event (at most to `limit`). False when nothing happened.
  bool step(time_point limit);
  /// Steps until `done()` or virtual time `limit`.
  void run_until(time_point limit, const std::function<bool()>& done = {});
  /// Every delivery so far, hashed: (time, sender, receiver, message types).
  uint64_t trace_hash() const { return trace_; }
  uint64_t deliveries() const { return deliveries_; }
  /// Virtual cost of handling one message: time passes while actors work.
  duration step_cost{std::chrono::microseconds{20}};

  /// Called before each delivery and after the receiver handled it.
  std::function<void(const delivery&)> before_delivery;
  std::function<void(caf::scheduled_actor*, int host)> after_delivery;

private:
  enum class verdict { ready, held, dropped };

  verdict judge(caf::scheduled_actor* a);
  void drop_head(caf::scheduled_actor* a);
  void adopt_new_actors(int host);
  void record(caf::scheduled_actor* a, caf::mailbox_element* m, int from);
  int node_of_host(int h) const { return h < 0 ? -1 : hosts_[h].node; }
  bool partitioned(int a, int b) const;
  time_point next_event(time_point limit) const;

  std::unique_ptr<caf::actor_system_config> cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  caf::scheduler::test_coordinator* sched_ = nullptr;
  std::mt19937_64 rng_;
  time_point start_;
  uint64_t trace_ = 1469598103934665603ull;
  uint64_t deliveries_ = 0;

  std::vector<std::string> nodes_;
  std::vector<int> current_; // node -> its process (-1: none)
  std::vector<host> hosts_;
  std::unordered_map<caf::actor_id, int> host_of_;
  std::unordered_map<caf::actor_id, const char*> names_;
  caf::actor_id seen_up_to_ = 0;

  struct episode {
    int a, b;
    time_point until;
    duration extra;
  };
  std::vector<std::pair<std::set<int>, std::set<int>>> partitions_;
  std::vector<episode> losses_;
  std::vector<episode> delays_;
  std::vector<episode> lags_; // a == b == node
  /// When each held message may be delivered (keyed by the element and
  /// checked against its sender and id: elements are reused).
  struct hold {
    caf::actor_id sender;
    uint64_t mid;
    time_point until;
  };
  std::unordered_map<const caf::mailbox_element*, hold> holds_;
};

} // namespace weir::sim
