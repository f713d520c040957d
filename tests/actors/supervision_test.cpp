// Supervision on CAF's deterministic scheduler: the jobmanager's supervisor
// restarts a crashed ResourceManager or Dispatcher (one-for-one) and gives
// up past its restart intensity; the Dispatcher restarts crashed JobMasters
// within each job's own restart intensity and fails only that job past it.
#include "caf_doctest.hpp"

#include "actors/supervisor/supervisor.hpp"
#include "config/build_features.hpp"
#include "actors/task_executor/task_executor.hpp"
#include "fakes.hpp"
#include "messages/errors.hpp"
#include "messages/record.hpp"

using namespace weir;
using namespace weir::test;

namespace {

int64_t sum_of(const job_result& r) {
  int64_t s = 0;
  for (auto& rec : to_records(r.collected))
    s += rec.num;
  return s;
}

/// Ends `h` the way an uncaught exception does (not a normal end).
template <class Handle>
void crash(const Handle& h) {
  caf::anon_send(caf::actor_cast<caf::actor>(h),
                 caf::exit_msg{h.address(), caf::make_error(
                                              caf::sec::runtime_error,
                                              "simulated")});
}

struct supervision_fixture : actor_fixture {
  job_store_actor store;
  supervisor_actor sup;
  std::vector<task_executor_actor> tes;

  void start(int max_restarts = 2, resource_manager_options rm_opts = {}) {
    store = sys.spawn(fake_job_store, recovered_jobs{});
    run();
    supervisor_options opts;
    opts.resource_manager = std::move(rm_opts);
    opts.intensity.max_restarts = max_restarts;
    // run() fast-forwards virtual time past every pending timeout (minutes
    // of request timeouts): a day keeps all crashes of a test in one window.
    opts.intensity.within = std::chrono::hours(24);
    sup = spawn_supervisor(sys, store, opts);
    run();
    add_task_executor();
  }

  void add_task_executor() {
    task_executor_options te;
    te.helper_threads = false; // deterministic: no threads
    te.id = resource_id{"te-" + std::to_string(tes.size())};
    te.slots = 2;
    tes.push_back(spawn_task_executor(sys, te, rm()));
    run();
  }

  std::pair<dispatcher_actor, resource_manager_actor> current() {
    std::pair<dispatcher_actor, resource_manager_actor> result;
    auto reply = self->request(sup, caf::infinite, lookup_atom_v);
    run();
    reply.receive(
      [&](dispatcher_actor& d, resource_manager_actor& rm) {
        result = {std::move(d), std::move(rm)};
      },
      [](caf::error& err) { FAIL_CHECK(caf::to_string(err)); });
    return result;
  }

  dispatcher_actor dispatcher() { return current().first; }
  resource_manager_actor rm() { return current().second; }

  job_result run_job(job_graph g) {
    auto d = dispatcher();
    CHECK(request<job_id>(d, submit_atom_v, g) == g.id);
    return request<job_result>(d, result_atom_v, g.id);
  }

  ~supervision_fixture() {
    std::vector<caf::actor> all;
    if (sup)
      all.push_back(caf::actor_cast<caf::actor>(sup));
    for (auto& te : tes)
      all.push_back(caf::actor_cast<caf::actor>(te));
    all.push_back(caf::actor_cast<caf::actor>(store));
    for (auto& h : all)
      caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
    run();
  }
};

} // namespace

TEST_CASE_FIXTURE(supervision_fixture,
                  "a crashed Dispatcher is replaced and jobs go on") {
  start();
  auto first = dispatcher();
  CHECK(run_job(numbers_graph(10)).state == job_state::finished);
  crash(first);
  run();
  auto second = dispatcher();
  CHECK(second);
  CHECK(second.address() != first.address());
  auto r = run_job(numbers_graph(100));
  CHECK(r.state == job_state::finished);
  CHECK(sum_of(r) == 5050);
}

TEST_CASE_FIXTURE(supervision_fixture,
                  "a crashed ResourceManager is replaced and re-announced") {
  start();
  auto old_rm = rm();
  crash(old_rm);
  run();
  auto new_rm = rm();
  CHECK(new_rm.address() != old_rm.address());
  // The TaskExecutor ended with its ResourceManager; the next one (a
  // taskmanager process registers again) serves the Dispatcher's jobs,
  // which now ask the new ResourceManager.
  add_task_executor();
  auto r = run_job(numbers_graph(100));
  CHECK(r.state == job_state::finished);
  CHECK(sum_of(r) == 5050);
}

TEST_CASE_FIXTURE(supervision_fixture,
                  "a restarted active ResourceManager gets the jobmanager's "
                  "address again") {
  // The worker backend records the address each ResourceManager starts it
  // with.
  auto started_with = std::make_shared<std::vector<std::string>>();
  resource_manager_options active;
  active.active = true;
  active.launcher = [started_with](caf::actor_system& sys,
                                   resource_manager_actor, worker_command cmd) {
    started_with->push_back(cmd.jobmanager);
    return sys.spawn([]() -> worker_launcher_actor::behavior_type {
      return {
        [](start_atom, const resource_id&, int32_t, const resource_profile&) {},
        [](cancel_atom, const resource_id&) {},
        [](tick_atom) {},
      };
    });
  };
  start(2, active);
  auto first = rm();
  // From here on no run(): an active ResourceManager's tick never stops,
  // so only what is due now runs (sched.run()), timers once.
  caf::anon_send(sup, start_atom_v, std::string{"10.0.0.1:6123"});
  sched.run();
  CHECK(*started_with == std::vector<std::string>{"10.0.0.1:6123"});
  crash(first);
  sched.run();
  sched.trigger_timeouts(); // a restart the supervisor may have delayed
  sched.run();
  CHECK(*started_with
        == std::vector<std::string>{"10.0.0.1:6123", "10.0.0.1:6123"});
}

TEST_CASE_FIXTURE(supervision_fixture,
                  "past its restart intensity the supervisor gives up") {
  start(1);
  self->monitor(sup);
  crash(dispatcher());
  run();
  crash(rm()); // second crash within the window
  run();
  caf::error reason;
  self->receive([&](caf::down_msg& dm) { reason = dm.reason; });
  CHECK(reason == make_error(errc::supervision_gave_up));
  CHECK(describe(reason)
        == "the ResourceManager crashed more than 1 restarts within 86400000 ms");
  sup = nullptr;
}

#if WEIR_FAULT_INJECTION // the tests of the hooks (scripts/test)
TEST_CASE_FIXTURE(supervision_fixture,
                  "a crashed JobMaster is restarted on the stored JobGraph") {
  start();
  auto g = numbers_graph(100);
  g.config["weir.fault.jobmaster-crashes"] = "2";
  auto r = run_job(g);
  CHECK(r.state == job_state::finished);
  CHECK(sum_of(r) == 5050);
  CHECK(row_count(r.collected) == 100);
}

TEST_CASE_FIXTURE(supervision_fixture,
                  "a JobMaster crashing past its job's restart intensity "
                  "fails that job, not the Dispatcher") {
  start(2);
  auto first = dispatcher();
  auto poisoned = numbers_graph(10);
  poisoned.config["weir.fault.jobmaster-crashes"] = "1000";
  auto r = run_job(poisoned);
  CHECK(r.state == job_state::failed);
  CHECK(r.error
        == "its JobMaster crashed 3 times within 86400000 ms (last: uncaught "
           "exception: injected JobMaster crash 3 of 1000 "
           "(weir.fault.jobmaster-crashes))");
  // Its result is stored: a later Dispatcher does not recover it.
  auto& dones = deref<fake_job_store_impl>(store).state.dones;
  REQUIRE(dones.size() == 1);
  CHECK(dones[0].id == poisoned.id);
  CHECK(dones[0].state == job_state::failed);
  // The same Dispatcher goes on serving, the job's limit is its own.
  CHECK(dispatcher().address() == first.address());
  auto other = numbers_graph(100);
  other.config["weir.fault.jobmaster-crashes"] = "2";
  auto ok = run_job(other);
  CHECK(ok.state == job_state::finished);
  CHECK(sum_of(ok) == 5050);
}

TEST_CASE_FIXTURE(supervision_fixture,
                  "a crashed JobMaster's restarts back off: the second waits "
                  "100 ms, its job RESTARTING meanwhile") {
  start(3);
  auto d = dispatcher();
  auto g = numbers_graph(10);
  g.config["weir.fault.jobmaster-crashes"] = "2";
  self->send(d, submit_atom_v, g);
  // Messages only, no timers: the first restart is at once, the second
  // waits for its backoff.
  consume_messages();
  self->receive([](job_id) {});
  auto status = self->request(d, caf::infinite, status_atom_v, g.id, false);
  consume_messages();
  status.receive(
    [&](job_status& s) { CHECK(s.state == job_state::restarting); },
    [](caf::error& err) { FAIL_CHECK(caf::to_string(err)); });
  advance_time(std::chrono::milliseconds{100});
  auto r = request<job_result>(d, result_atom_v, g.id);
  CHECK(r.state == job_state::finished);
  CHECK(row_count(r.collected) == 10);
}
#endif

TEST_CASE_FIXTURE(supervision_fixture,
                  "restarts back off: the second within the window waits "
                  "100 ms") {
  start(3);
  crash(dispatcher());
  run();
  auto second = dispatcher();
  crash(second);
  // Messages only, no timers: the restart waits for its backoff.
  consume_messages();
  auto reply = self->request(sup, caf::infinite, lookup_atom_v);
  consume_messages();
  reply.receive(
    [&](dispatcher_actor& d, resource_manager_actor&) {
      CHECK(d.address() == second.address());
    },
    [](caf::error& err) { FAIL_CHECK(caf::to_string(err)); });
  advance_time(std::chrono::milliseconds{100});
  run();
  auto third = dispatcher();
  CHECK(third.address() != second.address());
  CHECK(run_job(numbers_graph(10)).state == job_state::finished);
}

TEST_CASE_FIXTURE(supervision_fixture,
                  "a Dispatcher that ends on damaged storage is not restarted") {
  start(3);
  self->monitor(sup);
  auto d = dispatcher();
  auto damaged = make_error(errc::storage_corrupt, "DIR/000009.sst: damaged");
  caf::anon_send(caf::actor_cast<caf::actor>(d),
                 caf::exit_msg{d.address(), damaged});
  run();
  caf::error reason;
  self->receive([&](caf::down_msg& dm) { reason = dm.reason; },
                caf::after(std::chrono::seconds(0)) >> [] {});
  CHECK(reason == make_error(errc::storage_corrupt));
  CHECK(describe(reason) == "DIR/000009.sst: damaged");
  sup = nullptr;
}
