// The JobMaster's protocols on CAF's deterministic scheduler with a fake
// clock: slot offers and deployment, failover, checkpoint barriers and
// acknowledgements.
#include "caf_doctest.hpp"

#include "actors/job_master/job_master.hpp"
#include "actors/job_master/job_master_state.hpp"
#include "fake_job_store.hpp"
#include "job_master_fakes.hpp"
#include "messages/errors.hpp"

using namespace weir;
using namespace weir::test;
using namespace std::chrono_literals;

namespace {

using jm_impl = job_master_detail::job_master_self_actor::stateful_base<
  job_master_detail::jm_state>;

using slot_request_msg = std::vector<slot_request>;
using deployments_msg = std::vector<task_deployment>;
using subtasks_msg = std::vector<subtask_actor>;
using allocations_msg = std::vector<allocation_id>;

struct jm_fixture : actor_fixture {
  resource_manager_actor rm;
  dispatcher_actor dispatcher;
  task_executor_actor te;
  job_master_actor jm;
  job_graph graph;

  jm_fixture() {
    rm = sys.spawn(fake_resource_manager);
    dispatcher = sys.spawn(fake_dispatcher);
    te = sys.spawn(fake_task_executor, resource_id{"te-1"});
    sched.run();
    // A source and a sink in two tasks (a rebalance edge): two subtasks in
    // one shared slot; the source is flat execution 0.
    graph.id = job_id::random();
    graph.name = "test";
    graph.vertices.push_back(
      vertex_spec{"src", "sequence", {{"from", "1"}, {"to", "3"}}, 1});
    graph.vertices.push_back(vertex_spec{"out", "discard", {}, 1});
    graph.edges.push_back(edge_spec{"src", "out", partitioning::rebalance});
  }

  ~jm_fixture() {
    for (auto& s : te_state().subtasks)
      caf::anon_send_exit(s, caf::exit_reason::user_shutdown);
    if (jm)
      caf::anon_send_exit(jm, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(te, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(rm, caf::exit_reason::user_shutdown);
    caf::anon_send_exit(dispatcher, caf::exit_reason::user_shutdown);
    sched.run();
  }

  fake_rm_state& rm_state() { return deref<fake_rm_impl>(rm).state; }
  fake_te_state& te_state() { return deref<fake_te_impl>(te).state; }
  fake_dispatcher_state& dispatcher_state() {
    return deref<fake_dispatcher_impl>(dispatcher).state;
  }
  job_master_detail::jm_state& jm_state() { return deref<jm_impl>(jm).state; }
  fake_subtask_state& subtask_state(size_t i) {
    return deref<fake_subtask_impl>(te_state().subtasks.at(i)).state;
  }

  /// Spawns the JobMaster with the job's `config`; it asks the
  /// ResourceManager for its one shared slot.
  void spawn_jm(std::map<std::string, std::string> config = {}) {
    graph.config = std::move(config);
    jm = spawn_job_master(sys, graph, job_master_options{}, dispatcher, rm);
    sched.run_once(); // the JobMaster's initialization
    allow((start_atom), from(jm).to(jm));
    expect((request_atom, job_master_id, job_id, job_master_actor,
            slot_request_msg),
           from(jm).to(rm).with(_, _, graph.id, _, _));
    expect((int32_t), from(rm).to(jm));
  }

  /// The ResourceManager grants the newest requested slot at the
  /// TaskExecutor, which offers it to the JobMaster; the JobMaster accepts
  /// it and deploys both subtasks there, then starts them.
  void offer_and_deploy() {
    auto alloc = rm_state().requests.back().at(0).alloc;
    self->send(te, request_atom_v, resource_manager_id{}, graph.id,
               job_master_id{}, jm, std::vector<slot_grant>{{alloc, 0}});
    expect((request_atom, resource_manager_id, job_id, job_master_id,
            job_master_actor, std::vector<slot_grant>),
           from(self).to(te));
    expect((offer_atom, resource_id, std::vector<slot_offer>),
           from(te).to(jm).with(_, resource_id{"te-1"}, _));
    expect((submit_atom, job_master_id, job_master_actor, deployments_msg),
           from(jm).to(te));
    expect((allocations_msg), from(jm).to(te).with(allocations_msg{alloc}));
    expect((subtasks_msg), from(te).to(jm));
    auto n = te_state().subtasks.size();
    REQUIRE(n >= 2);
    // Consumers first: the sink, then the source.
    expect((start_atom, subtask_wiring),
           from(jm).to(te_state().subtasks[n - 1]));
    expect((start_atom, subtask_wiring),
           from(jm).to(te_state().subtasks[n - 2]));
  }

  execution_attempt_id attempt(size_t i) { return subtask_state(i).attempt; }
  subtask_actor subtask(size_t i) { return te_state().subtasks.at(i); }

  /// Subtask `i` reports FAILED ("boom").
  void fail_subtask(size_t i) {
    self->send(jm, update_atom_v, attempt(i), execution_state::failed,
               io_metrics{}, std::string{"boom"});
    expect((update_atom, execution_attempt_id, execution_state, io_metrics,
            std::string),
           from(self).to(jm).with(_, attempt(i), execution_state::failed, _,
                                  std::string{"boom"}));
  }

  /// Subtask `i` acknowledges checkpoint `id`.
  void ack(size_t i, int64_t id) {
    inject((checkpoint_atom, execution_attempt_id, int64_t, int64_t,
            operator_states),
           from(subtask(i)).to(jm).with(checkpoint_atom_v, attempt(i), id,
                                          int64_t{0}, operator_states{}));
  }
};

} // namespace

TEST_CASE_FIXTURE(jm_fixture, "the JobMaster deploys the subtasks of an offered slot") {
  spawn_jm();
  REQUIRE(rm_state().requests.size() == 1);
  CHECK(rm_state().requests[0].size() == 1); // one shared slot
  offer_and_deploy();
  REQUIRE(te_state().deployments.size() == 2);
  CHECK(te_state().deployments[0].job == graph.id);
  CHECK(subtask_state(0).started);
  CHECK(subtask_state(1).started);
  auto status = jm_state().job->state();
  CHECK(status == job_state::running);
  CHECK(jm_state().scheduler->slots().executor_name(0) == "te-1");
}

TEST_CASE_FIXTURE(jm_fixture, "a failed subtask restarts the job in a new round") {
  spawn_jm({{"restart-strategy.type", "fixed-delay"},
            {"restart-strategy.fixed-delay.delay", "1 s"}});
  offer_and_deploy();
  auto first_alloc = rm_state().requests.back().at(0).alloc;
  fail_subtask(0);
  CHECK(jm_state().job->state() == job_state::restarting);
  // The JobMaster cancels the subtask still running; it reports CANCELED.
  expect((cancel_atom), from(jm).to(subtask(1)));
  expect((update_atom, execution_attempt_id, execution_state, io_metrics,
          std::string),
         from(subtask(1)).to(jm).with(_, attempt(1), execution_state::canceled, _, _));
  CHECK(rm_state().requests.size() == 1); // nothing before the delay
  // After the restart delay: free the slots, ask again in round 1.
  advance_time(1s);
  expect((restart_atom, uint64_t), from(jm).to(jm).with(_, uint64_t{0}));
  expect((free_atom, job_id), from(jm).to(te).with(_, graph.id));
  expect((disconnect_atom, job_id, job_master_id), from(jm).to(rm));
  expect((request_atom, job_master_id, job_id, job_master_actor,
          slot_request_msg),
         from(jm).to(rm).with(_, _, graph.id, _, _));
  CHECK(jm_state().job->epoch() == 1);
  CHECK(jm_state().job->state() == job_state::running);
  REQUIRE(rm_state().requests.size() == 2);
  CHECK(rm_state().requests[1].at(0).alloc != first_alloc);
  // The new round deploys new attempts.
  expect((int32_t), from(rm).to(jm));
  offer_and_deploy();
  CHECK(te_state().deployments.size() == 4);
  CHECK(te_state().deployments[2].attempt != te_state().deployments[0].attempt);
}

TEST_CASE_FIXTURE(jm_fixture, "without restarts a failed subtask fails the job") {
  spawn_jm({{"restart-strategy.type", "none"}});
  offer_and_deploy();
  fail_subtask(1);
  expect((cancel_atom), from(jm).to(subtask(0)));
  expect((update_atom, execution_attempt_id, execution_state, io_metrics,
          std::string),
         from(subtask(0)).to(jm).with(_, attempt(0), execution_state::canceled, _, _));
  expect((free_atom, job_id), from(jm).to(te).with(_, graph.id));
  expect((disconnect_atom, job_id, job_master_id), from(jm).to(rm));
  while (allow((update_atom, job_status), from(jm).to(dispatcher))) {
  }
  expect((done_atom, job_result), from(jm).to(dispatcher));
  REQUIRE(dispatcher_state().results.size() == 1);
  auto& r = dispatcher_state().results[0];
  CHECK(r.id == graph.id);
  CHECK(r.state == job_state::failed);
  CHECK(r.error == "boom");
  jm = nullptr; // it has quit
}

TEST_CASE_FIXTURE(jm_fixture, "a bad job config fails the job with its cause") {
  graph.config = {{"restart-strategy.type", "sometimes"}};
  jm = spawn_job_master(sys, graph, job_master_options{}, dispatcher, rm);
  sched.run_once();
  allow((start_atom), from(jm).to(jm));
  expect((disconnect_atom, job_id, job_master_id), from(jm).to(rm));
  while (allow((update_atom, job_status), from(jm).to(dispatcher))) {
  }
  expect((done_atom, job_result), from(jm).to(dispatcher));
  REQUIRE(dispatcher_state().results.size() == 1);
  auto& r = dispatcher_state().results[0];
  CHECK(r.state == job_state::failed);
  CHECK(r.error.find("restart-strategy.type") != std::string::npos);
  CHECK(rm_state().requests.empty()); // it never asked for slots
  jm = nullptr;
}

TEST_CASE_FIXTURE(jm_fixture, "periodic checkpoints: trigger, acknowledgements, commit") {
  spawn_jm({{"execution.checkpointing.interval", "1 s"}});
  offer_and_deploy();
  advance_time(1s);
  expect((trigger_atom, uint64_t), from(jm).to(jm).with(_, uint64_t{0}));
  // Only the source gets the trigger; it sends the barrier downstream.
  expect((trigger_atom, checkpoint_barrier),
         from(jm).to(subtask(0))
           .with(_, checkpoint_barrier{1, checkpoint_kind::checkpoint}));
  ack(0, 1);
  CHECK(subtask_state(0).commits.empty()); // the sink has not acknowledged
  ack(1, 1);
  expect((commit_atom, int64_t), from(jm).to(subtask(0)).with(_, int64_t{1}));
  expect((commit_atom, int64_t), from(jm).to(subtask(1)).with(_, int64_t{1}));
  CHECK(jm_state().checkpoints->latest()->id == 1);
}

TEST_CASE_FIXTURE(jm_fixture, "a client's checkpoint is answered with its id") {
  spawn_jm();
  offer_and_deploy();
  auto reply = self->request(jm, caf::infinite, take_checkpoint_atom_v, true);
  expect((take_checkpoint_atom, bool), from(self).to(jm).with(_, true));
  expect((trigger_atom, checkpoint_barrier),
         from(jm).to(subtask(0))
           .with(_, checkpoint_barrier{1, checkpoint_kind::full_checkpoint}));
  ack(1, 1);
  ack(0, 1);
  expect((commit_atom, int64_t), from(jm).to(subtask(0)).with(_, int64_t{1}));
  expect((commit_atom, int64_t), from(jm).to(subtask(1)).with(_, int64_t{1}));
  int64_t id = 0;
  reply.receive([&](int64_t x) { id = x; },
                [](caf::error& err) { FAIL_CHECK(describe(err)); });
  CHECK(id == 1);
}

TEST_CASE_FIXTURE(jm_fixture, "a checkpoint of a job not yet deployed is refused") {
  spawn_jm();
  auto reply = self->request(jm, caf::infinite, take_checkpoint_atom_v, false);
  expect((take_checkpoint_atom, bool), from(self).to(jm));
  caf::error err;
  reply.receive([](int64_t) {}, [&](caf::error& e) { err = e; });
  CHECK(err == make_error(errc::not_running));
  CHECK(describe(err) == "job " + graph.id.to_string() + " is not running");
}

TEST_CASE_FIXTURE(jm_fixture, "weir stop answers once the job has FINISHED") {
  auto store = sys.spawn(fake_job_store, recovered_jobs{});
  sched.run();
  job_master_options opts;
  opts.store = store;
  jm = spawn_job_master(sys, graph, opts, dispatcher, rm);
  sched.run_once();
  allow((start_atom), from(jm).to(jm));
  // No checkpoint of its own stored: the job starts from its sources.
  expect((load_atom, job_id), from(jm).to(store));
  expect((loaded_checkpoint), from(store).to(jm));
  expect((request_atom, job_master_id, job_id, job_master_actor,
          slot_request_msg),
         from(jm).to(rm));
  expect((int32_t), from(rm).to(jm));
  offer_and_deploy();
  // (The TaskExecutor's answer to offer_and_deploy's grant waits there too.)
  auto waiting = self->mailbox().size();
  auto reply = self->request(jm, caf::infinite, savepoint_atom_v,
                             std::string{"/sp"}, savepoint_mode::stop);
  expect((savepoint_atom, std::string, savepoint_mode), from(self).to(jm));
  // The source takes the savepoint and halts at its barrier, which says
  // the job suspends (no --drain).
  expect((stop_atom, checkpoint_barrier),
         from(jm).to(subtask(0))
           .with(_, checkpoint_barrier{1, checkpoint_kind::savepoint, true}));
  CHECK(subtask_state(0).halted);
  ack(0, 1);
  ack(1, 1);
  // Stored as the job's newest checkpoint, confirmed to the sinks once
  // stored, then written as the savepoint.
  expect((checkpoint_atom, job_id, checkpoint_snapshot, int32_t),
         from(jm).to(store));
  expect((std::string), from(store).to(jm));
  expect((commit_atom, int64_t), from(jm).to(subtask(0)));
  expect((commit_atom, int64_t), from(jm).to(subtask(1)));
  expect((savepoint_atom, std::string, savepoint_data), from(jm).to(store));
  expect((std::string), from(store).to(jm));
  // The savepoint is written: the source ends its input (nothing is
  // canceled), and the client waits until every subtask has finished, so
  // that the sinks published their output.
  expect((finish_atom), from(jm).to(subtask(0)));
  CHECK(subtask_state(0).finish_requested);
  CHECK_FALSE(subtask_state(1).canceled);
  sched.run();
  CHECK(self->mailbox().size() == waiting); // no answer yet
  CHECK(dispatcher_state().results.empty());
  for (size_t i : {size_t{0}, size_t{1}})
    for (auto s : {execution_state::running, execution_state::finished})
      self->send(jm, update_atom_v, attempt(i), s, io_metrics{3, 3},
                 std::string{});
  sched.run();
  std::string path;
  reply.receive([&](std::string& p) { path = std::move(p); },
                [](caf::error& err) { FAIL_CHECK(describe(err)); });
  CHECK(path == "/sp/savepoint-" + graph.id.to_string().substr(0, 6) + "-1");
  REQUIRE(dispatcher_state().results.size() == 1);
  CHECK(dispatcher_state().results[0].state == job_state::finished);
  caf::anon_send_exit(store, caf::exit_reason::user_shutdown);
}

TEST_CASE_FIXTURE(jm_fixture,
                  "the JobMaster serves only its job's blobs, by content hash") {
  auto hash = std::string(32, 'a');
  graph.code.libraries = {{"libx.so", hash, ""}};
  spawn_jm();
  auto blob_error = [&](const std::string& h) {
    auto reply = self->request(jm, caf::infinite, blob_atom_v, h);
    expect((blob_atom, std::string), from(self).to(jm));
    caf::error err;
    reply.receive([](std::string&) {}, [&](caf::error& e) { err = e; });
    return err;
  };
  auto err = blob_error("../../x");
  CHECK(err == make_error(errc::invalid_job));
  CHECK(describe(err)
        == "blob hash '../../x' is not a content hash (32 lowercase hex "
           "digits)");
  auto other = std::string(32, 'b');
  err = blob_error(other);
  CHECK(err == make_error(errc::blob_not_found));
  CHECK(describe(err) == "the job has no blob " + other);
  // The job's own goes on to the store (this test's cluster has none).
  CHECK(describe(blob_error(hash)) == "this cluster has no blob store");
}

namespace {

/// The JobMaster fixture with a client's requests.
struct jm_client_fixture : jm_fixture {
  /// The job, cancelled by a client: what the reply says.
  cancel_outcome cancel_job() {
    auto reply = self->request(jm, caf::infinite, cancel_atom_v);
    expect((cancel_atom), from(self).to(jm));
    cancel_outcome out;
    reply.receive([&](cancel_outcome& o) { out = o; },
                  [](caf::error& err) { FAIL_CHECK(describe(err)); });
    return out;
  }

  /// The job's status, as a client sees it.
  job_status status() {
    auto reply = self->request(jm, caf::infinite, status_atom_v, false);
    expect((status_atom, bool), from(self).to(jm));
    job_status out;
    reply.receive([&](job_status& s) { out = std::move(s); },
                  [](caf::error& err) { FAIL_CHECK(describe(err)); });
    return out;
  }

  /// Runs everything left and checks that the job ended CANCELED.
  void check_canceled() {
    sched.run();
    REQUIRE(dispatcher_state().results.size() == 1);
    CHECK(dispatcher_state().results[0].state == job_state::canceled);
    jm = nullptr; // it has quit
  }
};

} // namespace

TEST_CASE_FIXTURE(jm_client_fixture, "a cancel while waiting for slots ends the job "
                              "at once and says so") {
  spawn_jm();
  // Its slot request is pending: nothing of it runs anywhere.
  CHECK(cancel_job()
        == cancel_outcome{job_state::running, job_state::canceled});
  check_canceled();
  CHECK(rm_state().disconnects == 1); // its pending request is dropped
}

TEST_CASE_FIXTURE(jm_client_fixture, "a cancel while the subtasks are being "
                              "deployed ends the job at once") {
  spawn_jm();
  auto alloc = rm_state().requests.back().at(0).alloc;
  self->send(te, request_atom_v, resource_manager_id{}, graph.id,
             job_master_id{}, jm, std::vector<slot_grant>{{alloc, 0}});
  expect((request_atom, resource_manager_id, job_id, job_master_id,
          job_master_actor, std::vector<slot_grant>),
         from(self).to(te));
  expect((offer_atom, resource_id, std::vector<slot_offer>),
         from(te).to(jm));
  // The deployment is on its way to the TaskExecutor.
  CHECK(cancel_job()
        == cancel_outcome{job_state::running, job_state::canceled});
  check_canceled();
  CHECK(te_state().freed == std::vector<job_id>{graph.id});
}

TEST_CASE_FIXTURE(jm_client_fixture, "a cancel of a running job stops its subtasks") {
  spawn_jm();
  offer_and_deploy();
  CHECK(cancel_job()
        == cancel_outcome{job_state::running, job_state::cancelling});
  expect((cancel_atom), from(jm).to(subtask(1)));
  expect((cancel_atom), from(jm).to(subtask(0)));
  check_canceled();
}

TEST_CASE_FIXTURE(jm_client_fixture, "a cancel while restarting ends the job without "
                              "waiting for the restart delay") {
  spawn_jm({{"restart-strategy.type", "fixed-delay"},
            {"restart-strategy.fixed-delay.delay", "300 s"}});
  offer_and_deploy();
  fail_subtask(0);
  expect((cancel_atom), from(jm).to(subtask(1)));
  expect((update_atom, execution_attempt_id, execution_state, io_metrics,
          std::string),
         from(subtask(1)).to(jm));
  CHECK(jm_state().job->state() == job_state::restarting);
  CHECK(cancel_job()
        == cancel_outcome{job_state::restarting, job_state::canceled});
  check_canceled();
}

TEST_CASE_FIXTURE(jm_client_fixture, "record counters count every attempt: they do "
                              "not go down after a restart") {
  spawn_jm({{"restart-strategy.type", "fixed-delay"},
            {"restart-strategy.fixed-delay.delay", "1 s"}});
  offer_and_deploy();
  self->send(jm, update_atom_v, attempt(0), execution_state::failed,
             io_metrics{600, 0}, std::string{"boom"});
  expect((update_atom, execution_attempt_id, execution_state, io_metrics,
          std::string),
         from(self).to(jm));
  expect((cancel_atom), from(jm).to(subtask(1)));
  expect((update_atom, execution_attempt_id, execution_state, io_metrics,
          std::string),
         from(subtask(1)).to(jm));
  advance_time(1s);
  sched.run();
  offer_and_deploy(); // the second attempt: subtasks 2 and 3
  self->send(jm, metrics_atom_v, attempt(2), io_metrics{40, 0});
  expect((metrics_atom, execution_attempt_id, io_metrics), from(self).to(jm));
  auto s = status();
  CHECK(s.restarts == 1);
  // The source's records: 600 of the first attempt, 40 of the second.
  CHECK(s.attempt_metrics.records_in == 40);
  CHECK(s.metrics.records_in == 640);
}
