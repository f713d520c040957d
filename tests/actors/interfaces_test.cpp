// Issue 11's messages on CAF's deterministic scheduler: one atom per meaning
// (rm_changed, finish, not_running), the ResourceManager's and
// TaskExecutor's own timers in their private interfaces, one heartbeat
// sender, and the TaskExecutor freeing a job in one place.
#include "caf_doctest.hpp"

#include "actors/dispatcher/dispatcher.hpp"
#include "actors/resource_manager/resource_manager.hpp"
#include "actors/supervisor/supervisor.hpp"
#include "actors/task_executor/task_executor.hpp"
#include "fakes.hpp"
#include "messages/errors.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

struct interfaces_fixture : actor_fixture {
  std::vector<caf::actor> started;

  template <class Handle>
  Handle keep(Handle h) {
    started.push_back(caf::actor_cast<caf::actor>(h));
    return h;
  }

  ~interfaces_fixture() {
    for (auto i = started.rbegin(); i != started.rend(); ++i)
      caf::anon_send_exit(*i, caf::exit_reason::user_shutdown);
    run();
  }

};

} // namespace

TEST_CASE_FIXTURE(interfaces_fixture,
                  "the supervisor hands a restarted ResourceManager to the "
                  "Dispatcher with rm_changed") {
  auto store = keep(sys.spawn(fake_job_store, recovered_jobs{}));
  run();
  supervisor_options opts;
  opts.intensity.max_restarts = 2;
  opts.intensity.within = std::chrono::hours(24);
  auto sup = keep(spawn_supervisor(sys, store, opts));
  run();
  auto [dispatcher, rm] = request<dispatcher_actor, resource_manager_actor>(
    sup, lookup_atom_v);
  caf::anon_send(caf::actor_cast<caf::actor>(rm),
                 caf::exit_msg{rm.address(),
                               caf::make_error(caf::sec::runtime_error,
                                               "simulated")});
  sched.run_once(); // the ResourceManager ends
  expect((caf::down_msg), from(rm).to(sup));
  expect((rm_changed_atom, resource_manager_actor),
         from(sup).to(dispatcher));
  run();
  auto [same_dispatcher, new_rm] = request<dispatcher_actor,
                                           resource_manager_actor>(
    sup, lookup_atom_v);
  CHECK(same_dispatcher == dispatcher);
  CHECK(new_rm != rm);
}

TEST_CASE_FIXTURE(interfaces_fixture,
                  "the Dispatcher stores a job's result with finish, and a "
                  "checkpoint of an ended job is not_running") {
  auto store = keep(sys.spawn(fake_job_store, recovered_jobs{}));
  auto rm = keep(spawn_resource_manager(sys, {}));
  task_executor_options te;
  te.helper_threads = false; // deterministic: no threads
  te.id = resource_id{"te"};
  te.slots = 2;
  keep(spawn_task_executor(sys, te, rm));
  run();
  auto dispatcher = keep(spawn_dispatcher(sys, store, rm, {}));
  run();
  auto g = numbers_graph(4);
  CHECK(request<job_id>(dispatcher, submit_atom_v, g) == g.id);
  auto& stored = deref<fake_job_store_impl>(store).state;
  REQUIRE(stored.dones.size() == 1);
  CHECK(stored.dones[0].id == g.id);
  CHECK(stored.dones[0].state == job_state::finished);
  auto err = error_of<int64_t>(*this, dispatcher, take_checkpoint_atom_v, g.id,
                               false);
  CHECK(err == make_error(errc::not_running));
  CHECK(describe(err) == "job " + g.id.to_string() + " is not running");
  err = error_of<std::string>(*this, dispatcher, savepoint_atom_v, g.id,
                              std::string{"/tmp"}, savepoint_mode::keep_running);
  CHECK(err == make_error(errc::not_running));
}

TEST_CASE_FIXTURE(interfaces_fixture,
                  "the ResourceManager's own beat sends heartbeat requests") {
  resource_manager_options opts;
  opts.heartbeat = heartbeat_options{200ms, 1000ms, 2};
  auto rm = keep(spawn_resource_manager(sys, opts));
  sched.run(); // its first round: nobody to ask yet
  auto te = keep(sys.spawn(fake_task_executor, rm,
                           fake_task_executor_options{resource_id{"te"}}));
  sched.run(); // the registration
  advance_time(200ms);
  expect((beat_atom), from(rm).to(rm));
  expect((heartbeat_atom), from(rm).to(te));
  expect((resource_id), from(te).to(rm).with(resource_id{"te"}));
  // Answered heartbeats keep it registered (run() would fast-forward the
  // periodic beats forever: time passes in steps here).
  for (int i = 0; i < 10; ++i) {
    advance_time(200ms);
    sched.run();
  }
  auto reply = self->request(rm, caf::infinite, overview_atom_v);
  sched.run();
  reply.receive(
    [](const cluster_overview& o) { CHECK(o.task_executors == 1); },
    [](caf::error& err) { FAIL_CHECK(caf::to_string(err)); });
}

TEST_CASE_FIXTURE(interfaces_fixture,
                  "a TaskExecutor frees a job's slots and gives them back "
                  "to the ResourceManager") {
  auto rm = keep(spawn_resource_manager(sys, {}));
  auto jm = keep(sys.spawn(fake_job_master));
  task_executor_options opts;
  opts.helper_threads = false; // deterministic: no threads
  opts.id = resource_id{"te"};
  opts.slots = 2;
  auto te = keep(spawn_task_executor(sys, opts, rm));
  run();
  auto job = job_id::random();
  std::vector<slot_request> reqs{slot_request{allocation_id::random(), {}},
                                 slot_request{allocation_id::random(), {}}};
  CHECK(request<int32_t>(rm, request_atom_v, job_master_id::random(), job, jm,
                         reqs)
        == 0);
  CHECK(request<cluster_overview>(rm, overview_atom_v).slots_free == 0);
  self->send(te, free_atom_v, job);
  expect((free_atom, job_id), from(self).to(te));
  expect((free_atom, resource_id, std::vector<allocation_id>),
         from(te).to(rm).with(_, resource_id{"te"}, _));
  CHECK(request<cluster_overview>(rm, overview_atom_v).slots_free == 2);
}
