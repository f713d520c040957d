// Heartbeats on CAF's deterministic scheduler with virtual time: a peer
// whose actor no longer answers (stuck, while its process and connection
// live on) is declared lost after heartbeat.timeout.
#include "caf_doctest.hpp"

#include "actors/resource_manager/resource_manager.hpp"
#include "actors/task_executor/task_executor.hpp"
#include "fakes.hpp"
#include "messages/errors.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

const heartbeat_options beats{200ms, 1000ms, 2};

struct heartbeat_fixture : actor_fixture {
  resource_manager_actor rm;
  std::vector<caf::actor> others;

  ~heartbeat_fixture() {
    for (auto& h : others)
      caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(rm, caf::exit_reason::user_shutdown);
    sched.run();
  }

  /// Lets `d` of virtual time pass in heartbeat intervals, running
  /// whatever becomes ready (the fixture's run() would fast-forward the
  /// periodic heartbeats forever).
  void pass(std::chrono::milliseconds d) {
    for (auto t = 0ms; t < d; t += 100ms) {
      sched.run();
      advance_time(100ms);
    }
    sched.run();
  }

  cluster_overview overview() {
    auto reply = self->request(rm, caf::infinite, overview_atom_v);
    sched.run();
    cluster_overview result;
    reply.receive([&](cluster_overview& o) { result = o; },
                  [](caf::error& err) { FAIL_CHECK(caf::to_string(err)); });
    return result;
  }
};

} // namespace

TEST_CASE_FIXTURE(heartbeat_fixture,
                  "a TaskExecutor that stops answering heartbeats is lost") {
  resource_manager_options opts;
  opts.heartbeat = beats;
  rm = spawn_resource_manager(sys, opts);
  sched.run();
  others.push_back(caf::actor_cast<caf::actor>(
    sys.spawn(fake_task_executor, rm,
              fake_task_executor_options{resource_id{"stuck"}, false,
                                         false})));
  task_executor_options healthy;
  healthy.helper_threads = false; // deterministic: no threads
  healthy.id = resource_id{"healthy"};
  healthy.heartbeat = beats;
  others.push_back(caf::actor_cast<caf::actor>(
    spawn_task_executor(sys, healthy, rm)));
  sched.run();
  CHECK(overview().task_executors == 2);
  pass(900ms);
  CHECK(overview().task_executors == 2); // silent, but not for long enough
  pass(400ms);
  auto o = overview();
  CHECK(o.task_executors == 1); // the stuck one is gone, the healthy stays
  CHECK(o.slots_total == 1);
  pass(5000ms);
  CHECK(overview().task_executors == 1);
}

TEST_CASE_FIXTURE(heartbeat_fixture,
                  "a TaskExecutor no longer heard from by its ResourceManager "
                  "ends") {
  // The ResourceManager sends no heartbeats (as if stuck).
  rm = spawn_resource_manager(sys, {});
  sched.run();
  task_executor_options te;
  te.helper_threads = false; // deterministic: no threads
  te.id = resource_id{"te"};
  te.heartbeat = beats;
  auto h = spawn_task_executor(sys, te, rm);
  others.push_back(caf::actor_cast<caf::actor>(h));
  sched.run();
  self->monitor(h);
  pass(900ms);
  CHECK(self->mailbox().empty());
  pass(400ms);
  caf::error reason;
  self->receive([&](caf::down_msg& dm) { reason = dm.reason; });
  CHECK(describe(reason) == "ResourceManager lost: no heartbeat for 1000 ms");
}
