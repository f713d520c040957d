#include "sim/cluster.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>

#include <caf/actor_system.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/mailbox_element.hpp>
#include <caf/scheduled_actor.hpp>
#include <caf/send.hpp>
#include <caf/stateful_actor.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "actors/common/event_log.hpp"
#include "actors/dispatcher/job_store_actor.hpp"
#include "actors/supervisor/supervisor.hpp"
#include "actors/task_executor/task_executor.hpp"
#include "messages/atoms.hpp"
#include "messages/errors.hpp"
#include "messages/job_graph.hpp"
#include "messages/job_result.hpp"
#include "messages/record.hpp"
#include "sim/checks.hpp"
#include "sim/faulty_store.hpp"
#include "storage/memory_store.hpp"

namespace weir::sim {

namespace {

using namespace std::chrono_literals;

/// Who leads the cluster now (what HA's leader retrieval would say): the
/// jobmanager's supervisor, none while it is down.
struct leader_info {
  supervisor_actor sup;
};
using leader_ptr = std::shared_ptr<leader_info>;

struct sim_job {
  job_graph graph;
  int64_t rows = 0;
  /// A keyed sum (1..rows by value mod keys) rather than the numbers.
  int64_t keys = 0;
  duration submit_at{0};
  bool done = false;
};

/// What the client, the harness and the checks share.
struct run_state {
  std::vector<sim_job> jobs;
  int done = 0;
  checks* check = nullptr;
};
using run_ptr = std::shared_ptr<run_state>;

// -- a taskmanager process ----------------------------------------------------

/// The taskmanager's connection loop (process/processes.cpp) as an actor:
/// it finds the jobmanager, starts a TaskExecutor, and when that loses its
/// master connects it (or a new one) to the next.
struct taskmanager_state {
  task_executor_options opts;
  leader_ptr leader;
  task_executor_actor te;
  bool retry_pending = false;
  static inline const char* name = "taskmanager";
};

using tm_ptr = caf::stateful_actor<taskmanager_state>*;

void retry_connect(tm_ptr self) {
  if (self->state.retry_pending)
    return;
  self->state.retry_pending = true;
  self->delayed_send(self, 200ms, connect_atom_v);
}

caf::behavior taskmanager_process(tm_ptr self, task_executor_options opts,
                                  leader_ptr leader) {
  self->state.opts = std::move(opts);
  self->state.leader = std::move(leader);
  self->set_down_handler([self](caf::down_msg& dm) {
    if (dm.source == self->state.te.address()) {
      self->state.te = nullptr;
      retry_connect(self);
    }
  });
  self->send(self, connect_atom_v);
  return {
    [self](connect_atom) {
      self->state.retry_pending = false;
      auto sup = self->state.leader->sup;
      if (!sup) {
        retry_connect(self);
        return;
      }
      self->request(sup, 1s, lookup_atom_v)
        .then(
          [self](dispatcher_actor& d, resource_manager_actor& rm) {
            auto& st = self->state;
            if (st.te) { // it kept subtasks for the next master to adopt
              caf::anon_send(caf::actor_cast<caf::actor>(st.te), connect_atom_v,
                             std::move(d), std::move(rm));
              return;
            }
            auto o = st.opts;
            o.dispatcher = std::move(d);
            o.owner = caf::actor_cast<caf::actor>(self);
            st.te = spawn_task_executor(self->system(), std::move(o),
                                        std::move(rm));
            self->monitor(st.te);
          },
          [self](caf::error&) { retry_connect(self); });
    },
    [self](lost_atom, std::string&) { retry_connect(self); },
  };
}

// -- the client ---------------------------------------------------------------

struct client_state {
  run_ptr run;
  leader_ptr leader;
  static inline const char* name = "client";
};

using client_ptr = caf::stateful_actor<client_state>*;

/// A keyed sum's output: one row per key, each the exact sum of the
/// numbers of its key (keyed state restored exactly once).
void check_sums(checks& check, const sim_job& job, const job_result& r) {
  std::map<std::string, int64_t> expected;
  for (int64_t v = 1; v <= job.rows; ++v)
    expected[std::to_string(v % job.keys)] += v;
  std::map<std::string, int64_t> got;
  std::vector<std::string> problems;
  for (auto& rec : to_records(r.collected))
    if (!got.emplace(rec.key, rec.num).second)
      problems.push_back(fmt::format("key {} twice", rec.key));
  for (auto& [key, sum] : expected) {
    auto i = got.find(key);
    if (i == got.end())
      problems.push_back(fmt::format("key {} missing", key));
    else if (i->second != sum)
      problems.push_back(fmt::format("key {}: {}, not {}", key, i->second, sum));
  }
  for (auto& [key, sum] : got)
    if (!expected.count(key))
      problems.push_back(fmt::format("key {} unexpected", key));
  if (!problems.empty())
    check.broke(fmt::format("job {}'s sums of 1..{} by value mod {} are "
                            "wrong: {}",
                            job.graph.id.to_string(), job.rows, job.keys,
                            fmt::join(problems, "; ")));
}

void check_result(client_ptr self, int32_t i, const job_result& r) {
  auto& job = self->state.run->jobs[i];
  auto& check = *self->state.run->check;
  auto id = job.graph.id.to_string();
  if (r.state != job_state::finished) {
    check.broke(fmt::format("job {} ended {}: {}", id, to_string(r.state),
                            r.error));
    return;
  }
  if (job.keys > 0) {
    check_sums(check, job, r);
    return;
  }
  std::vector<int> seen(static_cast<size_t>(job.rows) + 1, 0);
  int64_t strange = 0;
  for (auto& rec : to_records(r.collected)) {
    if (rec.num < 1 || rec.num > job.rows)
      ++strange;
    else
      ++seen[static_cast<size_t>(rec.num)];
  }
  int64_t missing = 0;
  int64_t doubled = 0;
  int64_t first_bad = 0;
  for (int64_t v = 1; v <= job.rows; ++v) {
    auto n = seen[static_cast<size_t>(v)];
    if (n != 1 && first_bad == 0)
      first_bad = v;
    missing += n == 0;
    doubled += n > 1 ? n - 1 : 0;
  }
  if (missing + doubled + strange > 0)
    check.broke(fmt::format("job {}'s output is not exactly 1..{} once: {} "
                            "missing, {} more than once (first: {}), {} "
                            "others",
                            id, job.rows, missing, doubled, first_bad,
                            strange));
}

void retry(client_ptr self, caf::atom_value what, int32_t i) {
  if (what == caf::atom("submit"))
    self->delayed_send(self, 500ms, submit_atom_v, i);
  else
    self->delayed_send(self, 500ms, result_atom_v, i);
}

/// Finds the Dispatcher, then does `f` with it (or tries again later).
template <class F>
void with_dispatcher(client_ptr self, caf::atom_value what, int32_t i, F f) {
  auto sup = self->state.leader->sup;
  if (!sup) {
    retry(self, what, i);
    return;
  }
  self->request(sup, 1s, lookup_atom_v)
    .then([f](dispatcher_actor& d, resource_manager_actor&) { f(d); },
          [self, what, i](caf::error&) { retry(self, what, i); });
}

caf::behavior client(client_ptr self, run_ptr run, leader_ptr leader) {
  self->state.run = std::move(run);
  self->state.leader = std::move(leader);
  auto& jobs = self->state.run->jobs;
  for (size_t i = 0; i < jobs.size(); ++i)
    self->delayed_send(self, jobs[i].submit_at, submit_atom_v,
                       static_cast<int32_t>(i));
  return {
    [self](submit_atom, int32_t i) {
      with_dispatcher(self, caf::atom("submit"), i,
                      [self, i](dispatcher_actor& d) {
                        auto& g = self->state.run->jobs[i].graph;
                        // Submitting a job id again is idempotent.
                        self->request(d, 5s, submit_atom_v, g)
                          .then(
                            [self, i](job_id&) {
                              self->send(self, result_atom_v, i);
                            },
                            [self, i](caf::error&) {
                              retry(self, caf::atom("submit"), i);
                            });
                      });
    },
    [self](result_atom, int32_t i) {
      with_dispatcher(self, caf::atom("result"), i,
                      [self, i](dispatcher_actor& d) {
                        auto id = self->state.run->jobs[i].graph.id;
                        self->request(d, 10s, result_atom_v, id)
                          .then(
                            [self, i](job_result& r) {
                              auto& run = *self->state.run;
                              if (run.jobs[i].done)
                                return;
                              run.jobs[i].done = true;
                              ++run.done;
                              check_result(self, i, r);
                            },
                            [self, i](caf::error&) {
                              retry(self, caf::atom("result"), i);
                            });
                      });
    },
  };
}

// -- the run ------------------------------------------------------------------

job_graph make_job(std::mt19937_64& rng, int index, int64_t rows,
                   int32_t parallelism) {
  job_graph g;
  g.id = job_id::random();
  g.name = fmt::format("sim-{}", index);
  // About two seconds of input, so that checkpoints and faults meet it.
  auto rate = std::max<int64_t>(rows / parallelism / 2, 10);
  g.vertices = {{"numbers",
                 "sequence",
                 {{"from", "1"},
                  {"to", std::to_string(rows)},
                  {"rate", std::to_string(rate)}},
                 parallelism},
                {"result", "collect", {}, 1}};
  g.edges = {{"numbers", "result", partitioning::rebalance}};
  auto interval = 100 + static_cast<int>(rng() % 900);
  g.config = {
    {"execution.checkpointing.interval", fmt::format("{} ms", interval)},
    {"restart-strategy.type", "fixed-delay"},
    {"restart-strategy.fixed-delay.attempts", "1000000"},
    {"restart-strategy.fixed-delay.delay", "200 ms"},
  };
  return g;
}

/// The numbers, keyed by value mod `keys` and summed per key at
/// parallelism `sums` (keyed state in checkpoints, a hash exchange).
job_graph make_sum_job(std::mt19937_64& rng, int index, int64_t rows,
                       int32_t parallelism, int64_t keys, int32_t sums) {
  auto g = make_job(rng, index, rows, parallelism);
  auto collect = g.vertices.back();
  g.vertices.pop_back();
  g.vertices.push_back(
    {"keyed", "map", {{"function", "key_mod"}, {"modulus", std::to_string(keys)}},
     parallelism});
  g.vertices.push_back({"sums", "sum", {}, sums});
  g.vertices.push_back(collect);
  g.edges = {{"numbers", "keyed", partitioning::forward},
             {"keyed", "sums", partitioning::hash},
             {"sums", "result", partitioning::rebalance}};
  return g;
}

class cluster {
public:
  cluster(const run_options& opts, world& w, run_ptr run)
    : opts_(opts), w_(w), run_(std::move(run)) {
    char tmpl[] = "/tmp/weir-sim-XXXXXX";
    if (auto* dir = mkdtemp(tmpl))
      checkpoint_dir_ = dir;
    jm_nodes_[0] = w_.add_node("jobmanager");
    for (int i = 1; i <= opts_.taskmanagers; ++i)
      tm_nodes_.push_back(w_.add_node(fmt::format("tm-{}", i)));
    client_node_ = w_.add_node("client");
    jm_nodes_[1] = w_.add_node("jobmanager-b"); // the standby's machine
  }

  ~cluster() {
    std::error_code ec;
    if (!checkpoint_dir_.empty())
      std::filesystem::remove_all(checkpoint_dir_, ec);
  }

  int node_of_tm(int n) const { return tm_nodes_[n - 1]; }
  /// The machine of the leading jobmanager (or of the last one, while it
  /// is down).
  int jm_node() const { return jm_nodes_[leading_]; }
  int standby_node() const { return jm_nodes_[1 - leading_]; }
  int client_node() const { return client_node_; }
  void fail_writes(bool on) { *failing_ = on; }
  /// Whether the job store of the process handling a message fails writes.
  bool writes_fail(int host) const {
    auto i = stores_.find(host);
    return *failing_ || i == stores_.end() || w_.host_at(host).fenced;
  }

  void start_jobmanager() {
    int node = jm_node();
    std::shared_ptr<faulty_store> kv;
    int h = w_.start_process(node, [&] {
      auto& sys = w_.system();
      kv = std::make_shared<faulty_store>(memory_, failing_);
      auto store = spawn_job_store(sys, kv, checkpoint_dir_, false);
      supervisor_options sup;
      heartbeat_options hb;
      hb.interval = 500ms;
      hb.timeout = 3s;
      sup.resource_manager.heartbeat = hb;
      sup.job_master.heartbeat = hb;
      sup.job_master.checkpoint_dir = checkpoint_dir_;
      sup.job_master.reconcile_timeout = 10s;
      // The lease: lost when a standby took over (fail_over).
      int h = w_.process_of(node);
      sup.job_master.leading = [w = &w_, h] { return !w->host_at(h).fenced; };
      leader_->sup = spawn_supervisor(sys, store, sup);
    });
    stores_[h] = kv;
  }

  void crash_jobmanager() {
    w_.crash(jm_node());
    leader_->sup = nullptr;
  }

  /// The leader hung past its lease: its store refuses its writes, and a
  /// standby on the other machine leads (recovering from the same store).
  void fail_over() {
    int old = jm_node();
    int h = w_.process_of(old);
    // Crashed meanwhile (its restart leads), or not the hung one: a leader
    // that runs renews its lease.
    if (h < 0 || w_.host_at(h).state != world::host::life::hung)
      return;
    w_.fence(old);
    stores_[h]->fence();
    leading_ = 1 - leading_;
    if (!w_.crashed(jm_node())) // a fenced one from before, still there
      w_.crash(jm_node());
    leader_->sup = nullptr;
    start_jobmanager();
  }

  void start_taskmanager(int n) {
    w_.start_process(node_of_tm(n), [&] {
      task_executor_options te;
      te.id = resource_id{fmt::format("tm-{}", n)};
      te.slots = opts_.slots;
      te.helper_threads = false;
      te.heartbeat.interval = 500ms;
      te.heartbeat.timeout = 3s;
      te.keep_tasks = 30s;
      w_.system().spawn(taskmanager_process, te, leader_);
    });
  }

  void start_client() {
    w_.start_process(client_node_, [&] {
      w_.system().spawn(client, run_, leader_);
    });
  }

private:
  const run_options& opts_;
  world& w_;
  run_ptr run_;
  leader_ptr leader_ = std::make_shared<leader_info>();
  /// The jobmanagers' storage: kept across crashes, shared by a standby.
  std::shared_ptr<storage::kv_store> memory_
    = std::make_shared<storage::memory_store>();
  std::shared_ptr<bool> failing_ = std::make_shared<bool>(false);
  std::map<int, std::shared_ptr<faulty_store>> stores_; // by host
  std::string checkpoint_dir_;
  int jm_nodes_[2] = {0, 0};
  int leading_ = 0; ///< which of jm_nodes_ leads
  std::vector<int> tm_nodes_;
  int client_node_ = 0;
};

/// One thing the harness does at a virtual time: a fault's start or end.
struct action {
  duration at;
  std::function<void()> apply;
};

} // namespace

run_outcome run_simulation(const run_options& opts) {
  run_outcome out;
  // The event log on stderr with --log; else nowhere (problems included:
  // ten thousand seeds' crashed jobmanagers would fill the test log).
  static std::FILE* nowhere = std::fopen("/dev/null", "w");
  enable_event_log(opts.log ? stderr : nowhere, "sim");
  world w{opts.seed};
  checks check{w};
  auto run = std::make_shared<run_state>();
  run->check = &check;
  // The jobs: sizes, parallelism and submission times from the seed.
  for (int i = 0; i < opts.jobs; ++i) {
    sim_job j;
    j.rows = 100 + static_cast<int64_t>(w.rng()() % std::max<int64_t>(
                                          opts.max_rows - 99, 1));
    auto p = 1 + static_cast<int32_t>(w.rng()() % 3);
    if (opts.sum_jobs && i % 2 == 1) {
      j.keys = 1 + static_cast<int64_t>(w.rng()() % 20);
      auto sums = 1 + static_cast<int32_t>(w.rng()() % 3);
      j.graph = make_sum_job(w.rng(), i, j.rows, p, j.keys, sums);
    } else {
      j.graph = make_job(w.rng(), i, j.rows, p);
    }
    j.submit_at = duration{static_cast<int64_t>(
      w.rng()() % static_cast<uint64_t>(std::max<int64_t>(
                    opts.fault_window.count(), 1)))};
    run->jobs.push_back(std::move(j));
  }
  auto faults = plan_faults(w.rng(), opts.faults, opts.fault_count,
                            opts.fault_window, opts.taskmanagers);
  for (auto& f : faults)
    out.faults.push_back(describe(f));
  cluster c{opts, w, run};
  // Observers: the checks, and the cost of the control plane per
  // taskmanager.
  uint64_t te_messages = 0;
  uint64_t heartbeats = 0;
  w.before_delivery = [&](const delivery& d) {
    check.before(d);
    if (opts.trace) {
      auto text = d.message->content().stringify();
      if (text.size() > 300)
        text = text.substr(0, 300) + "...";
      auto who = [&](int h) {
        return h < 0 ? std::string{"-"} : w.host_at(h).name;
      };
      auto sid = d.message->sender ? d.message->sender->id() : 0;
      std::fprintf(stderr, "%10.3f %s#%llu(%s) -> %s#%llu(%s) %s\n",
                   static_cast<double>(ms(w.elapsed())) / 1000.0,
                   std::string{w.name_of(sid)}.c_str(),
                   static_cast<unsigned long long>(sid),
                   who(d.sender_host).c_str(), d.receiver->name(),
                   static_cast<unsigned long long>(d.receiver->id()),
                   who(d.receiver_host).c_str(), text.c_str());
    }
    auto sender = d.message->sender ? d.message->sender->id() : 0;
    bool to_te = named(d.receiver, "task_executor");
    if (to_te || w.name_of(sender) == "task_executor") {
      ++te_messages;
      auto& xs = d.message->content();
      if ((to_te && xs.match_elements<heartbeat_atom>())
          || (!to_te && xs.match_elements<resource_id>()))
        ++heartbeats;
    }
    if (named(d.receiver, "job_store") && !c.writes_fail(d.receiver_host)
        && d.message->content().match_elements<finish_atom, job_result>())
      check.finished(d.message->content().get_as<job_result>(1).id);
  };
  w.after_delivery = [&](caf::scheduled_actor* a, int host) {
    check.after(a, host);
  };
  c.start_jobmanager();
  for (int n = 1; n <= opts.taskmanagers; ++n)
    c.start_taskmanager(n);
  c.start_client();
  auto stop = [&] { return !check.broken().empty(); };
  // The faults' starts and ends, in time order.
  std::vector<action> actions;
  int failing_writes = 0;
  for (auto& f : faults) {
    auto end = f.at + f.lasts;
    switch (f.kind) {
      case fault_kind::crash_taskmanager: {
        int n = f.nodes[0];
        actions.push_back({f.at, [&w, &c, n] { w.crash(c.node_of_tm(n)); }});
        actions.push_back({end, [&w, &c, n] {
                             if (w.crashed(c.node_of_tm(n)))
                               c.start_taskmanager(n);
                           }});
        break;
      }
      case fault_kind::crash_jobmanager:
        actions.push_back({f.at, [&c] { c.crash_jobmanager(); }});
        actions.push_back({end, [&w, &c] {
                             if (w.crashed(c.jm_node()))
                               c.start_jobmanager();
                           }});
        break;
      case fault_kind::hang: {
        // The jobmanager's machine is the leader's when the hang starts.
        auto node = std::make_shared<int>(-1);
        int tm = f.nodes[0];
        actions.push_back({f.at, [&w, &c, node, tm] {
                             *node = tm == 0 ? c.jm_node() : c.node_of_tm(tm);
                             w.hang(*node, true);
                           }});
        actions.push_back({end, [&w, node] { w.hang(*node, false); }});
        break;
      }
      case fault_kind::partition: {
        std::set<int> away;
        for (auto n : f.nodes)
          away.insert(c.node_of_tm(n));
        std::set<int> rest{c.jm_node(), c.standby_node(), c.client_node()};
        for (int n = 1; n <= opts.taskmanagers; ++n)
          if (!away.count(c.node_of_tm(n)))
            rest.insert(c.node_of_tm(n));
        auto heal = f.at + f.lasts;
        if (opts.connection_timeout.count() > 0)
          heal = f.at + std::min(f.lasts, opts.connection_timeout);
        actions.push_back({f.at, [&w, away, rest] { w.partition(away, rest); }});
        actions.push_back({heal, [&w] { w.heal_partitions(); }});
        break;
      }
      case fault_kind::loss: {
        int b = c.node_of_tm(f.nodes[1]);
        auto lasts = f.lasts;
        actions.push_back({f.at, [&w, &c, b, lasts] {
                             w.lose_connection(c.jm_node(), b, w.now() + lasts);
                           }});
        break;
      }
      case fault_kind::delay: {
        int b = c.node_of_tm(f.nodes[1]);
        auto lasts = f.lasts;
        auto amount = f.amount;
        actions.push_back({f.at, [&w, &c, b, lasts, amount] {
                             w.delay_link(c.jm_node(), b, amount,
                                          w.now() + lasts);
                           }});
        break;
      }
      case fault_kind::skew: {
        int tm = f.nodes[0];
        auto lasts = f.lasts;
        auto amount = f.amount;
        actions.push_back({f.at, [&w, &c, tm, lasts, amount] {
                             int node = tm == 0 ? c.jm_node() : c.node_of_tm(tm);
                             w.lag_clock(node, amount, w.now() + lasts);
                           }});
        break;
      }
      case fault_kind::storage:
        actions.push_back({f.at, [&c, &failing_writes] {
                             ++failing_writes;
                             c.fail_writes(true);
                           }});
        actions.push_back({end, [&c, &failing_writes] {
                             c.fail_writes(--failing_writes > 0);
                           }});
        break;
      case fault_kind::failover:
      case fault_kind::failover_freeze: {
        // The hung leader; after the lease (3 s) a standby leads; when it
        // resumes, its watchdog ends it within `amount`.
        auto node = std::make_shared<int>(-1);
        auto grace = f.amount;
        actions.push_back({f.at, [&w, &c, node] {
                             *node = c.jm_node();
                             w.hang(*node, true);
                           }});
        actions.push_back({f.at + 3s, [&c, node] {
                             if (c.jm_node() == *node)
                               c.fail_over();
                           }});
        actions.push_back({end, [&w, &c, node, grace, stop] {
                             if (c.jm_node() == *node || w.crashed(*node)) {
                               w.hang(*node, false);
                               return;
                             }
                             if (grace.count() > 0) {
                               w.hang(*node, false);
                               w.run_until(w.now() + grace, stop);
                             }
                             w.crash(*node);
                           }});
        break;
      }
    }
  }
  std::stable_sort(actions.begin(), actions.end(),
                   [](const action& x, const action& y) { return x.at < y.at; });
  auto start = w.now();
  duration last_fault{0};
  for (auto& a : actions) {
    w.run_until(start + a.at, stop);
    if (stop())
      break;
    a.apply();
    last_fault = a.at;
  }
  // Faults are over: every job ends within the liveness bound.
  auto quiet_from = std::max(last_fault, opts.fault_window);
  auto all_done = [&] { return stop() || run->done == opts.jobs; };
  w.run_until(start + quiet_from + opts.liveness, all_done);
  if (!stop() && run->done < opts.jobs) {
    std::string open;
    for (auto& j : run->jobs)
      if (!j.done)
        open += (open.empty() ? "" : ", ") + j.graph.id.to_string();
    check.broke(fmt::format("liveness: {} of {} jobs did not end within {} ms "
                            "after the last fault: {}",
                            opts.jobs - run->done, opts.jobs,
                            ms(opts.liveness), open));
  }
  out.trace = w.trace_hash();
  out.deliveries = w.deliveries();
  out.virtual_time = w.elapsed();
  auto seconds = std::max(1e-9, static_cast<double>(ms(w.elapsed())) / 1000.0);
  out.te_messages_per_second = static_cast<double>(te_messages) / seconds
                               / opts.taskmanagers;
  out.heartbeats_per_second = static_cast<double>(heartbeats) / seconds
                              / opts.taskmanagers;
  out.jobs_finished = run->done;
  out.broken = check.broken();
  return out;
}

} // namespace weir::sim
