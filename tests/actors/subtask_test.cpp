// The subtask actor when its operators cannot be built or opened, on CAF's
// deterministic scheduler: it reports FAILED to its JobMaster and ends.
#include "caf_doctest.hpp"

#include "actors/task_executor/subtask.hpp"
#include "fakes.hpp"

using namespace weir;
using namespace weir::test;

TEST_CASE_FIXTURE(actor_fixture,
                  "a subtask whose operators cannot open reports FAILED and "
                  "ends before any wiring") {
  auto jm = sys.spawn(fake_job_master);
  run();
  task_deployment d;
  d.task_name = "lines -> out";
  d.chain = {vertex_spec{"lines", "no_such_operator", {}, 1},
             vertex_spec{"out", "collect", {}, 1}};
  subtask_env env;
  env.system = &sys;
  auto subtask = spawn_subtask(d, jm, env);
  sched.run_once(); // its initialization: the operators fail
  expect((update_atom, execution_attempt_id, execution_state, io_metrics,
          std::string),
         from(subtask).to(jm).with(_, _, execution_state::failed, _, _));
  auto* actor = caf::actor_cast<caf::abstract_actor*>(subtask);
  CHECK(actor->getf(caf::abstract_actor::is_terminated_flag));
  // The JobMaster's wiring may still come: nothing runs on the ended actor
  // (it would watch its consumers and start a runner that never opened).
  self->send(subtask, start_atom_v, subtask_wiring{{{subtask}}});
  run();
  CHECK(actor->getf(caf::abstract_actor::is_terminated_flag));
  caf::anon_send_exit(jm, caf::exit_reason::user_shutdown);
  run();
}
