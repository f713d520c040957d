// The Dispatcher's protocol against fake JobMasters (its JobMaster factory
// injected) and a fake job store, on CAF's deterministic scheduler with
// virtual time: what it stores, whom it starts, restarts and answers, and
// when. dispatcher_test.cpp runs the same Dispatcher with real JobMasters.
#include "caf_doctest.hpp"

#include <memory>

#include <caf/scoped_execution_unit.hpp>

#include "actors/dispatcher/dispatcher.hpp"
#include "event_log_capture.hpp"
#include "fakes.hpp"
#include "messages/errors.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

/// A JobMaster stand-in that reports its job RUNNING when started and does
/// nothing else on its own: the test ends its job (`finish`) or crashes it.
struct scripted_job_master_state {
  job_graph graph;
  int32_t incarnation = 0;
  dispatcher_actor dispatcher;
  int cancels = 0;
  static inline const char* name = "scripted_job_master";
};

using scripted_impl
  = caf::stateful_actor<scripted_job_master_state, job_master_actor::base>;

job_status running_status(const job_graph& g) {
  job_status s;
  s.id = g.id;
  s.name = g.name;
  s.state = job_state::running;
  return s;
}

job_result result_in(const job_graph& g, job_state state) {
  job_result r;
  r.id = g.id;
  r.name = g.name;
  r.state = state;
  return r;
}

job_master_actor::behavior_type
scripted_job_master(job_master_actor::stateful_pointer<scripted_job_master_state> self,
                    job_graph graph, int32_t incarnation,
                    dispatcher_actor dispatcher) {
  auto& st = self->state;
  st.graph = std::move(graph);
  st.incarnation = incarnation;
  st.dispatcher = dispatcher;
  self->send(dispatcher, update_atom_v, running_status(st.graph));
  return {
    [=](offer_atom, const resource_id&, const std::vector<slot_offer>&) {
      return std::vector<allocation_id>{};
    },
    [=](update_atom, execution_attempt_id, execution_state, const io_metrics&,
        const std::string&) {},
    [=](crashed_atom, execution_attempt_id, const std::string&) {
      return true;
    },
    [=](exit_status_atom, execution_attempt_id, int32_t) {},
    [=](metrics_atom, execution_attempt_id, const io_metrics&) {},
    [=](collect_atom, execution_attempt_id, const collected_table&) {},
    [=](collect_atom, int64_t) { return std::vector<collected_table>{}; },
    [=](status_atom, bool) { return running_status(self->state.graph); },
    [=](cancel_atom) {
      auto& st = self->state;
      ++st.cancels;
      self->send(st.dispatcher, done_atom_v,
                 result_in(st.graph, job_state::canceled));
      self->quit();
      return cancel_outcome{job_state::running, job_state::cancelling};
    },
    [=](free_atom, const std::vector<allocation_id>&) {},
    [=](unmet_atom, const std::string&) {},
    [=](heartbeat_atom) { return self->state.graph.id; },
    [=](checkpoint_atom, execution_attempt_id, int64_t, int64_t,
        operator_states&) {},
    [=](take_checkpoint_atom, bool) { return int64_t{1}; },
    [=](savepoint_atom, const std::string& dir, savepoint_mode) {
      return dir + "/savepoint-1";
    },
    [=](rescale_atom, int32_t n) { return n; },
    [=](blob_atom, const std::string&) { return std::string{}; },
  };
}

/// Every JobMaster the Dispatcher started, oldest first.
struct started_masters {
  std::vector<job_master_actor> all;
};

job_graph one_vertex_job(const char* name) {
  job_graph g;
  g.id = job_id::random();
  g.name = name;
  g.vertices = {{"numbers", "sequence", {{"from", "1"}, {"to", "3"}}, 1},
                {"result", "collect", {}, 1}};
  g.edges = {{"numbers", "result", partitioning::forward}};
  return g;
}

struct dispatcher_protocol_fixture : actor_fixture {
  job_store_actor store;
  resource_manager_actor rm;
  dispatcher_actor dispatcher;
  std::shared_ptr<started_masters> masters
    = std::make_shared<started_masters>();

  void start(supervision_options supervision = {},
             recovered_jobs stored = {}) {
    store = sys.spawn(fake_job_store, std::move(stored));
    rm = caf::actor_cast<resource_manager_actor>(sys.spawn(
      [](caf::event_based_actor*) -> caf::behavior { return {}; }));
    auto started = masters;
    job_master_factory fake
      = [started](caf::actor_system& sys, job_graph g, job_master_options opts,
                  dispatcher_actor d, resource_manager_actor) {
          auto jm = sys.spawn(scripted_job_master, std::move(g),
                              opts.incarnation, std::move(d));
          started->all.push_back(jm);
          return jm;
        };
    dispatcher = spawn_dispatcher(sys, store, rm, {}, supervision, false,
                                  std::move(fake));
    run();
  }

  ~dispatcher_protocol_fixture() {
    for (auto& jm : masters->all)
      caf::anon_send_exit(jm, caf::exit_reason::user_shutdown);
    for (auto h : {caf::actor_cast<caf::actor>(dispatcher),
                   caf::actor_cast<caf::actor>(rm),
                   caf::actor_cast<caf::actor>(store)})
      if (h)
        caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
    run();
  }

  fake_job_store_state& stored() {
    return deref<fake_job_store_impl>(store).state;
  }

  scripted_job_master_state& master(size_t i) {
    return deref<scripted_impl>(masters->all.at(i)).state;
  }

  /// The JobMaster `i` ends its job in `state`, as a real one would.
  void finish(size_t i, job_state state) {
    auto jm = masters->all.at(i);
    caf::anon_send(dispatcher, done_atom_v, result_in(master(i).graph, state));
    run();
    caf::anon_send_exit(jm, caf::exit_reason::normal);
    run();
  }

  /// JobMaster `i` crashes; the messages that follow are delivered, no
  /// timer fires (virtual time stands still).
  void crash(size_t i) {
    caf::anon_send_exit(masters->all.at(i), caf::exit_reason::kill);
    sched.run();
  }
};

} // namespace

TEST_CASE_FIXTURE(dispatcher_protocol_fixture,
                  "a stored submission gets one JobMaster, which reports") {
  start();
  auto g = one_vertex_job("one");
  CHECK(request<job_id>(dispatcher, submit_atom_v, g) == g.id);
  REQUIRE(stored().puts.size() == 1);
  REQUIRE(masters->all.size() == 1);
  CHECK(master(0).graph.id == g.id);
  CHECK(master(0).incarnation == 0);
  auto s = request<job_status>(dispatcher, status_atom_v, g.id, false);
  CHECK(s.state == job_state::running);
  // A second submission of the same graph starts nothing more.
  CHECK(request<job_id>(dispatcher, submit_atom_v, g) == g.id);
  CHECK(masters->all.size() == 1);
}

TEST_CASE_FIXTURE(dispatcher_protocol_fixture,
                  "a waiting client gets the result only after it is stored") {
  start();
  auto g = one_vertex_job("waited");
  CHECK(request<job_id>(dispatcher, submit_atom_v, g) == g.id);
  stored().hold_results = true;
  // Virtual time stands still (sched.run()): the store's write is slow, not
  // timed out.
  auto waiting = self->request(dispatcher, caf::infinite, result_atom_v, g.id);
  sched.run();
  caf::anon_send(dispatcher, done_atom_v,
                 result_in(master(0).graph, job_state::finished));
  sched.run();
  REQUIRE(stored().dones.size() == 1);
  CHECK(stored().dones[0].state == job_state::finished);
  // The store has not answered: neither has the Dispatcher.
  if (auto* next = self->mailbox().peek())
    FAIL("answered early: " << caf::to_string(next->content()));
  REQUIRE(stored().held.size() == 1);
  {
    caf::scoped_execution_unit here{&sys};
    auto& impl = deref<fake_job_store_impl>(store);
    impl.context(&here);
    impl.state.held[0].deliver(true);
    impl.context(nullptr);
  }
  sched.run();
  job_result r;
  waiting.receive([&](job_result& x) { r = std::move(x); },
                  [](caf::error& e) { FAIL(describe(e)); });
  CHECK(r.state == job_state::finished);
  CHECK(r.id == g.id);
}

TEST_CASE_FIXTURE(dispatcher_protocol_fixture,
                  "a crashed JobMaster is started again after its backoff") {
  event_log_capture log;
  start(supervision_options{3, 60000ms});
  auto g = one_vertex_job("crashy");
  CHECK(request<job_id>(dispatcher, submit_atom_v, g) == g.id);
  // The first crash restarts at once, the second after 100 ms of virtual
  // time, and no sooner.
  crash(0);
  REQUIRE(masters->all.size() == 2);
  CHECK(master(1).incarnation == 1);
  crash(1);
  CHECK(masters->all.size() == 2);
  CHECK(sched.has_pending_timeout());
  advance_time(99ms);
  sched.run();
  CHECK(masters->all.size() == 2);
  advance_time(1ms);
  sched.run();
  REQUIRE(masters->all.size() == 3);
  CHECK(master(2).incarnation == 2);
  CHECK(master(2).graph.id == g.id);
  CHECK(log.lines_with("JobMaster crashed").size() == 2);
  CHECK(log.lines_with("restarting it in 100 ms (2 of 3 restarts within "
                       "60000 ms)")
          .size()
        == 1);
}

TEST_CASE_FIXTURE(dispatcher_protocol_fixture,
                  "crashes past the restart intensity fail the job, stored") {
  start(supervision_options{1, 60000ms});
  auto g = one_vertex_job("doomed");
  CHECK(request<job_id>(dispatcher, submit_atom_v, g) == g.id);
  crash(0);
  REQUIRE(masters->all.size() == 2);
  crash(1);
  CHECK(masters->all.size() == 2);
  REQUIRE(stored().dones.size() == 1);
  CHECK(stored().dones[0].state == job_state::failed);
  CHECK(stored().dones[0].error.find("JobMaster crashed")
        != std::string::npos);
  auto r = request<job_result>(dispatcher, result_atom_v, g.id);
  CHECK(r.state == job_state::failed);
}

TEST_CASE_FIXTURE(dispatcher_protocol_fixture,
                  "cancel goes to the JobMaster; its outcome to the client") {
  start();
  auto g = one_vertex_job("canceled");
  CHECK(request<job_id>(dispatcher, submit_atom_v, g) == g.id);
  auto out = request<cancel_outcome>(dispatcher, cancel_atom_v, g.id);
  CHECK(out.before == job_state::running);
  CHECK(out.after == job_state::cancelling);
  CHECK(master(0).cancels == 1);
  REQUIRE(stored().dones.size() == 1);
  CHECK(stored().dones[0].state == job_state::canceled);
  CHECK(request<job_result>(dispatcher, result_atom_v, g.id).state
        == job_state::canceled);
}

TEST_CASE_FIXTURE(dispatcher_protocol_fixture,
                  "recovery starts a JobMaster for each stored job without "
                  "a result") {
  auto a = one_vertex_job("a");
  auto b = one_vertex_job("b");
  recovered_jobs stored;
  stored.graphs = {a, b};
  stored.results = {result_in(b, job_state::finished)};
  start({}, stored);
  REQUIRE(masters->all.size() == 1);
  CHECK(master(0).graph.id == a.id);
  CHECK(request<job_result>(dispatcher, result_atom_v, b.id).state
        == job_state::finished);
  finish(0, job_state::finished);
  CHECK(request<job_result>(dispatcher, result_atom_v, a.id).state
        == job_state::finished);
}
