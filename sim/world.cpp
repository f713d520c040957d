#include "sim/world.hpp"

#include <algorithm>
#include <typeinfo>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/scheduled_actor.hpp>
#include <caf/scheduler/test_coordinator.hpp>
#include <caf/send.hpp>

#include "messages/ids.hpp"
#include "messages/type_ids.hpp"

namespace weir::sim {

namespace {

using namespace std::chrono_literals;

void mix(uint64_t& h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  h *= 0x100000001b3ull;
}

/// A stable hash of each element's type (its name; built-in types by
/// number), so that the trace does not depend on addresses.
uint64_t type_hash(const caf::type_erased_tuple& xs) {
  uint64_t h = xs.size();
  for (size_t i = 0; i < xs.size(); ++i) {
    auto rtti = xs.type(i);
    mix(h, rtti.first);
    if (rtti.second != nullptr)
      mix(h, std::hash<std::string_view>{}(rtti.second->name()));
  }
  return h;
}

bool is_exit(caf::mailbox_element* m) {
  return m->content().match_elements<caf::exit_msg>();
}

} // namespace

bool named(const caf::scheduled_actor* a, std::string_view name) {
  return a != nullptr && name == a->name();
}

world::world(uint64_t seed) : rng_(seed) {
  cfg_ = std::make_unique<caf::actor_system_config>();
  add_message_types(*cfg_);
  cfg_->set("scheduler.policy", caf::atom("testing"));
  cfg_->set("logger.file-verbosity", caf::atom("quiet"));
  cfg_->set("logger.console-verbosity", caf::atom("quiet"));
  sys_ = std::make_unique<caf::actor_system>(*cfg_);
  sched_ = &dynamic_cast<caf::scheduler::test_coordinator&>(sys_->scheduler());
  sched_->clock().current_time += 1h; // not the epoch: nothing reads 0
  start_ = now();
  // Job ids, attempt ids, fencing tokens: the same for the same seed.
  seed_random_ids(seed ^ 0x5eed5eed5eed5eedull);
}

world::~world() {
  // The actor system waits for every actor: end them all, then let the
  // exits and down messages run out.
  for (auto& h : hosts_)
    for (auto& w : h.actors)
      if (auto p = caf::actor_cast<caf::strong_actor_ptr>(w))
        caf::anon_send_exit(caf::actor_cast<caf::actor>(p),
                            caf::exit_reason::kill);
  for (auto& h : hosts_)
    h.state = host::life::crashed;
  size_t guard = 0;
  while (guard++ < 10'000'000) {
    if (!sched_->jobs.empty()) {
      auto* a = dynamic_cast<caf::scheduled_actor*>(sched_->jobs.front());
      auto* head = a ? a->mailbox().peek() : nullptr;
      if (head != nullptr && !is_exit(head)) {
        drop_head(a);
        continue;
      }
      sched_->run_once();
    } else if (!sched_->trigger_timeout()) {
      break;
    }
  }
}

time_point world::now() const {
  return sched_->clock().current_time;
}

int world::add_node(std::string name) {
  nodes_.push_back(std::move(name));
  current_.push_back(-1);
  return static_cast<int>(nodes_.size()) - 1;
}

int world::start_process(int node, const std::function<void()>& spawn) {
  host h;
  h.name = nodes_[node];
  h.node = node;
  hosts_.push_back(std::move(h));
  int id = static_cast<int>(hosts_.size()) - 1;
  current_[node] = id;
  spawn();
  adopt_new_actors(id);
  for (auto& w : hosts_[id].actors)
    if (auto p = caf::actor_cast<caf::strong_actor_ptr>(w))
      hosts_[id].roots.push_back(std::move(p));
  return id;
}

int world::process_of(int node) const {
  return current_[node];
}

int world::host_of(caf::actor_id id) const {
  auto i = host_of_.find(id);
  return i == host_of_.end() ? -1 : i->second;
}

std::string_view world::name_of(caf::actor_id id) const {
  auto i = names_.find(id);
  return i == names_.end() ? std::string_view{} : i->second;
}

bool world::crashed(int node) const {
  return current_[node] < 0;
}

void world::crash(int node) {
  int h = current_[node];
  if (h < 0)
    return;
  auto& hs = hosts_[h];
  hs.state = host::life::crashed;
  for (auto& w : hs.actors)
    if (auto p = caf::actor_cast<caf::strong_actor_ptr>(w))
      caf::anon_send_exit(caf::actor_cast<caf::actor>(p),
                          caf::exit_reason::kill);
  current_[node] = -1;
}

void world::hang(int node, bool hung) {
  int h = current_[node];
  if (h < 0)
    return;
  hosts_[h].state = hung ? host::life::hung : host::life::up;
}

void world::fence(int node) {
  if (int h = current_[node]; h >= 0)
    hosts_[h].fenced = true;
}

void world::partition(const std::set<int>& side_a, const std::set<int>& side_b) {
  partitions_.emplace_back(side_a, side_b);
}

void world::heal_partitions() {
  partitions_.clear();
}

void world::lose_connection(int a, int b, time_point until) {
  losses_.push_back(episode{a, b, until, duration{0}});
}

void world::delay_link(int a, int b, duration extra, time_point until) {
  delays_.push_back(episode{a, b, until, extra});
}

void world::lag_clock(int node, duration lag, time_point until) {
  lags_.push_back(episode{node, node, until, lag});
}

bool world::partitioned(int a, int b) const {
  for (auto& [x, y] : partitions_)
    if ((x.count(a) && y.count(b)) || (x.count(b) && y.count(a)))
      return true;
  return false;
}

void world::adopt_new_actors(int host) {
  if (sys_->latest_actor_id() <= seen_up_to_)
    return;
  seen_up_to_ = sys_->latest_actor_id();
  // A spawned actor is scheduled at once (to start): the one that ran last,
  // or the harness, spawned it, on its host.
  for (auto* job : sched_->jobs) {
    auto* a = dynamic_cast<caf::scheduled_actor*>(job);
    if (a == nullptr || host_of_.count(a->id()))
      continue;
    host_of_.emplace(a->id(), host);
    if (host >= 0)
      hosts_[host].actors.emplace_back(a->ctrl());
  }
}

world::verdict world::judge(caf::scheduled_actor* a) {
  int h = host_of(a->id());
  auto* head = a->mailbox().peek();
  if (h < 0 || head == nullptr)
    return verdict::ready;
  auto& hs = hosts_[h];
  if (hs.state == host::life::crashed)
    return is_exit(head) ? verdict::ready : verdict::dropped;
  if (hs.state == host::life::hung)
    return verdict::held;
  auto sender = head->sender ? head->sender->id() : caf::invalid_actor_id;
  int sh = head->sender ? host_of(sender) : -1;
  int from = node_of_host(sh);
  int to = hs.node;
  auto t = now();
  duration extra{0};
  if (from >= 0 && from != to) {
    for (auto& e : losses_)
      if (t < e.until
          && ((e.a == from && e.b == to) || (e.a == to && e.b == from)))
        return verdict::dropped;
    if (partitioned(from, to))
      return verdict::held;
    for (auto& e : delays_)
      if (t < e.until
          && ((e.a == from && e.b == to) || (e.a == to && e.b == from)))
        extra = std::max(extra, e.extra);
  } else if (sh == h || sh < 0) {
    // Its own timers and messages to itself.
    for (auto& e : lags_)
      if (t < e.until && e.a == to)
        extra = std::max(extra, e.extra);
  }
  if (extra.count() == 0)
    return verdict::ready;
  auto mid = head->mid.integer_value();
  auto i = holds_.find(head);
  if (i == holds_.end() || i->second.sender != sender || i->second.mid != mid)
    i = holds_.insert_or_assign(head, hold{sender, mid, t + extra}).first;
  return t >= i->second.until ? verdict::ready : verdict::held;
}

void world::drop_head(caf::scheduled_actor* a) {
  auto* expected = a->mailbox().peek();
  auto& qs = a->mailbox().queue().queues();
  auto& urgent = std::get<caf::scheduled_actor::urgent_queue_index>(qs);
  auto& normal = std::get<caf::scheduled_actor::normal_queue_index>(qs);
  // take_front takes cached (skipped) messages first: flush them back,
  // and drop only if the head is still the message judged.
  urgent.flush_cache();
  normal.flush_cache();
  auto* head = a->mailbox().peek();
  if (head != expected || head == nullptr)
    return;
  holds_.erase(head);
  if (urgent.peek() == head)
    urgent.take_front();
  else if (normal.peek() == head)
    normal.take_front();
}

void world::record(caf::scheduled_actor* a, caf::mailbox_element* m,
                   int from) {
  ++deliveries_;
  names_.emplace(a->id(), a->name());
  mix(trace_, static_cast<uint64_t>(elapsed().count()));
  mix(trace_, a->id());
  mix(trace_, m->sender ? m->sender->id() : 0);
  mix(trace_, type_hash(m->content()));
  if (before_delivery)
    before_delivery(delivery{a, m, host_of(a->id()), from});
}

time_point world::next_event(time_point limit) const {
  auto t = limit;
  auto& timers = sched_->clock().schedule();
  if (!timers.empty())
    t = std::min(t, timers.begin()->first);
  auto n = now();
  for (auto& [ptr, h] : holds_)
    if (h.until > n)
      t = std::min(t, h.until);
  return std::max(t, n);
}

bool world::step(time_point limit) {
  auto& jobs = sched_->jobs;
  size_t n = jobs.size();
  if (n > 0) {
    size_t start = rng_() % n;
    for (size_t k = 0; k < n; ++k) {
      size_t i = (start + k) % n;
      auto* job = jobs[i];
      auto* a = dynamic_cast<caf::scheduled_actor*>(job);
      verdict v = verdict::ready;
      if (a != nullptr) {
        while ((v = judge(a)) == verdict::dropped) {
          auto* before = a->mailbox().peek();
          drop_head(a);
          if (a->mailbox().peek() == before)
            break; // could not drop it now: let it run
        }
        if (v == verdict::held)
          continue;
      }
      std::rotate(jobs.begin(), jobs.begin() + static_cast<long>(i),
                  jobs.begin() + static_cast<long>(i) + 1);
      int h = a ? host_of(a->id()) : -1;
      caf::strong_actor_ptr guard;
      if (a != nullptr) {
        guard = caf::strong_actor_ptr{a->ctrl()};
        if (auto* head = a->mailbox().peek()) {
          int from = head->sender ? host_of(head->sender->id()) : -1;
          holds_.erase(head);
          record(a, head, from);
        }
      }
      sched_->run_once();
      adopt_new_actors(h);
      if (a != nullptr && after_delivery)
        after_delivery(a, h);
      sched_->advance_time(step_cost);
      return true;
    }
  }
  auto t = next_event(limit);
  if (t <= now())
    return false;
  sched_->advance_time(t - now());
  return true;
}

void world::run_until(time_point limit, const std::function<bool()>& done) {
  while (now() < limit && !(done && done()))
    if (!step(limit))
      break;
}

} // namespace weir::sim
