// The Dispatcher with a real ResourceManager, TaskExecutor, JobMasters and
// subtasks and a fake job store, on CAF's deterministic scheduler.
#include "caf_doctest.hpp"

#include <caf/scoped_execution_unit.hpp>

#include "actors/dispatcher/dispatcher.hpp"
#include "actors/resource_manager/resource_manager.hpp"
#include "actors/task_executor/task_executor.hpp"
#include "event_log_capture.hpp"
#include "fakes.hpp"
#include "messages/errors.hpp"
#include "messages/record.hpp"
#include "tests/rows.hpp"
#include "plan/schemas.hpp"
#include "storage/job_graph_store.hpp"

using namespace weir;
using namespace weir::test;

namespace {

/// sequence 1..n → filter even → collect, with the given parallelism.
job_graph evens(int64_t n, int32_t parallelism = 2) {
  job_graph g;
  g.id = job_id::random();
  g.name = "evens";
  g.vertices = {
    {"numbers", "sequence", {{"from", "1"}, {"to", std::to_string(n)}}, parallelism},
    {"even", "filter", {{"function", "even"}}, parallelism},
    {"result", "collect", {}, 1}};
  g.edges = {{"numbers", "even", partitioning::forward},
             {"even", "result", partitioning::rebalance}};
  return g;
}

std::vector<int64_t> values(const std::vector<collected_table>& tables) {
  std::vector<int64_t> result;
  for (auto& r : to_records(tables))
    result.push_back(r.num);
  std::sort(result.begin(), result.end());
  return result;
}

struct dispatcher_fixture : actor_fixture {
  job_store_actor store;
  resource_manager_actor rm;
  dispatcher_actor dispatcher;
  task_executor_actor te;

  void start(recovered_jobs stored = {}) {
    store = sys.spawn(fake_job_store, std::move(stored));
    rm = spawn_resource_manager(sys, {});
    task_executor_options te;
    te.helper_threads = false; // deterministic: no threads
    te.id = resource_id{"te-1"};
    te.slots = 4;
    this->te = spawn_task_executor(sys, te, rm);
    run();
    dispatcher = spawn_dispatcher(sys, store, rm, {});
    run();
  }

  ~dispatcher_fixture() {
    for (auto h : {caf::actor_cast<caf::actor>(dispatcher),
                   caf::actor_cast<caf::actor>(te),
                   caf::actor_cast<caf::actor>(rm),
                   caf::actor_cast<caf::actor>(store)})
      if (h)
        caf::anon_send_exit(h, caf::exit_reason::user_shutdown);
    run();
  }

  fake_job_store_state& stored() {
    return deref<fake_job_store_impl>(store).state;
  }

  /// Answers the result writes the store held (in its context, as if it
  /// ran).
  void release_held_results() {
    caf::scoped_execution_unit here{&sys};
    auto& impl = deref<fake_job_store_impl>(store);
    impl.context(&here);
    for (auto& rp : impl.state.held)
      rp.deliver(true);
    impl.state.held.clear();
    impl.context(nullptr);
  }

  job_result result_of(job_id id) {
    return request<job_result>(dispatcher, result_atom_v, id);
  }

  caf::error submit_error(job_graph g) {
    caf::error result;
    auto reply = self->request(dispatcher, caf::infinite, submit_atom_v,
                               std::move(g));
    run();
    reply.receive([](job_id) {}, [&](caf::error& e) { result = e; });
    return result;
  }
};

} // namespace

TEST_CASE_FIXTURE(dispatcher_fixture,
                  "a submission is acknowledged only after it is stored") {
  start();
  auto g = evens(10);
  self->send(dispatcher, submit_atom_v, g);
  expect((submit_atom, job_graph), from(self).to(dispatcher));
  expect((put_atom, job_graph), from(dispatcher).to(store));
  CHECK(stored().puts.size() == 1);
  // With the schemas a client from before rows did not send.
  CHECK(!has_schemas(g));
  auto derived = g;
  REQUIRE(!derive_missing_schemas(derived));
  CHECK(stored().puts[0] == derived);
  CHECK(has_schemas(stored().puts[0]));
  // The acknowledgement leaves only now, after the store answered.
  expect((bool), from(store).to(dispatcher));
  expect((job_id), from(dispatcher).to(self).with(g.id));
}

TEST_CASE_FIXTURE(dispatcher_fixture, "a job runs to FINISHED with its results") {
  start();
  auto g = evens(10);
  CHECK(request<job_id>(dispatcher, submit_atom_v, g) == g.id);
  auto r = result_of(g.id);
  CHECK(r.state == job_state::finished);
  CHECK(r.error == "");
  CHECK(values(r.collected) == std::vector<int64_t>{2, 4, 6, 8, 10});
  CHECK(r.metrics.records_in == 10);
  CHECK(r.metrics.records_out == 5);
  REQUIRE(stored().dones.size() == 1);
  CHECK(stored().dones[0].state == job_state::finished);
  auto s = request<job_status>(dispatcher, status_atom_v, g.id, false);
  CHECK(s.state == job_state::finished);
}

TEST_CASE_FIXTURE(dispatcher_fixture,
                  "resubmitting a job is idempotent; another graph is refused") {
  start();
  auto g = evens(4);
  CHECK(request<job_id>(dispatcher, submit_atom_v, g) == g.id);
  CHECK(request<job_id>(dispatcher, submit_atom_v, g) == g.id);
  CHECK(stored().puts.size() == 1);
  REQUIRE(stored().dones.size() == 1); // it ran once
  auto other = evens(6);
  other.id = g.id;
  auto err = submit_error(other);
  CHECK(err == make_error(errc::duplicate_job));
  CHECK(describe(err) == "job " + g.id.to_string()
                           + " already exists with a different graph");
  CHECK(stored().puts.size() == 1);
}

TEST_CASE_FIXTURE(dispatcher_fixture, "an invalid graph is refused, naming the vertex") {
  start();
  auto g = evens(4);
  g.vertices[1].params["function"] = "prime";
  auto err = submit_error(g);
  CHECK(err == make_error(errc::invalid_job));
  CHECK(describe(err).find("vertex 'even': parameter 'function': unknown "
                           "filter function 'prime'")
        == 0);
  CHECK(stored().puts.empty());
}

TEST_CASE_FIXTURE(dispatcher_fixture,
                  "a graph whose schemas do not fit is refused before it is "
                  "stored") {
  start();
  event_log_capture log;
  auto g = evens(4);
  g.edges[0].part = partitioning::hash;
  g.edges[0].key = {"nope"};
  auto err = submit_error(g);
  CHECK(err == make_error(errc::invalid_job));
  CHECK(describe(err).find("edge 'numbers' -> 'even': key field 'nope' is "
                           "not in (")
        == 0);
  CHECK(log.lines_with("refused").size() == 1);
  CHECK(stored().puts.empty());
}

TEST_CASE_FIXTURE(dispatcher_fixture,
                  "a job or vertex name longer than 256 bytes is refused "
                  "before it is stored or logged") {
  start();
  auto g = evens(4);
  g.name = std::string(10 << 20, 'n'); // a hand-written client's 10 MB name
  auto err = submit_error(g);
  CHECK(err == make_error(errc::invalid_job));
  CHECK(describe(err) == "job name: 10485760 bytes, more than the 256 allowed");
  g = evens(4);
  g.vertices[1].id = std::string(257, 'v');
  g.edges[0].to = g.vertices[1].id;
  g.edges[1].from = g.vertices[1].id;
  CHECK(describe(submit_error(g))
        == "vertex 1: id: 257 bytes, more than the 256 allowed");
  CHECK(stored().puts.empty());
}

TEST_CASE_FIXTURE(dispatcher_fixture,
                  "a library or file name that is no file name is refused "
                  "before it is stored, and logged once") {
  start();
  event_log_capture log;
  auto hash = std::string(32, 'a');
  // What a hand-written client sends, with no CLI checking it first.
  auto g = evens(4);
  g.code.libraries = {{"../../x", hash, ""}};
  auto err = submit_error(g);
  CHECK(err == make_error(errc::invalid_job));
  CHECK(describe(err) == "library name '../../x' is not a file name");
  CHECK(log.lines_with("refused").size() == 1);
  CHECK(log.lines_with("job " + g.id.to_string()
                       + " refused: library name '../../x' is not a file "
                         "name")
          .size()
        == 1);
  g.code.libraries = {{"libok.so", hash, ""}};
  g.code.files = {{"..", hash, ""}};
  CHECK(describe(submit_error(g)) == "file name '..' is not a file name");
  g.code.files = {{"data.txt", "../../x", ""}};
  CHECK(describe(submit_error(g))
        == "file hash '../../x' is not a content hash (32 lowercase hex "
           "digits)");
  // Vertex ids name state files on the workers.
  g = evens(4);
  g.vertices[2].id = "../../result";
  g.edges[1].to = g.vertices[2].id;
  CHECK(describe(submit_error(g))
        == "vertex id '../../result' is not a file name");
  CHECK(log.lines_with("refused").size() == 4);
  CHECK(stored().puts.empty());
  CHECK(request<std::vector<job_status>>(dispatcher, list_atom_v).empty());
}

TEST_CASE_FIXTURE(dispatcher_fixture,
                  "a blob put whose hash is not a content hash is refused "
                  "before it reaches the store, and logged once") {
  start();
  event_log_capture log;
  auto err = error_of<bool>(*this, dispatcher, blob_atom_v, put_atom_v,
                            std::string{"../../x"}, std::string{"bytes"});
  CHECK(err == make_error(errc::invalid_job));
  CHECK(describe(err)
        == "blob hash '../../x' is not a content hash (32 lowercase hex "
           "digits)");
  CHECK(log.lines_with("refused").size() == 1);
  CHECK(log.lines_with("blob refused: blob hash '../../x' is not a content "
                       "hash")
          .size()
        == 1);
  CHECK(stored().blob_puts.empty());
  // A well-formed hash goes on to the store (which checks the content).
  auto hash = std::string(32, '0');
  CHECK(request<bool>(dispatcher, blob_atom_v, put_atom_v, hash,
                      std::string{"bytes"}));
  CHECK(stored().blob_puts == std::vector<std::string>{hash});
}

TEST_CASE_FIXTURE(dispatcher_fixture, "an unknown job is reported") {
  start();
  auto id = job_id::random();
  caf::error err;
  auto reply = self->request(dispatcher, caf::infinite, status_atom_v, id,
                             false);
  run();
  reply.receive([](job_status&) {}, [&](caf::error& e) { err = e; });
  CHECK(err == make_error(errc::unknown_job));
  CHECK(describe(err) == "no job " + id.to_string());
}

TEST_CASE_FIXTURE(dispatcher_fixture,
                  "recovery runs stored unfinished jobs and never finished ones") {
  auto unfinished = evens(6);
  auto finished = evens(8);
  job_result old;
  old.id = finished.id;
  old.name = finished.name;
  old.state = job_state::finished;
  old.collected = test::tables_of({record::integer("", 42)});
  recovered_jobs stored_before;
  stored_before.graphs = {unfinished, finished};
  stored_before.results = {old};
  start(stored_before);
  auto r = result_of(unfinished.id);
  CHECK(r.state == job_state::finished);
  CHECK(values(r.collected) == std::vector<int64_t>{2, 4, 6});
  auto again = result_of(finished.id);
  CHECK(again == old);
  REQUIRE(stored().dones.size() == 1);
  CHECK(stored().dones[0].id == unfinished.id);
}

TEST_CASE_FIXTURE(dispatcher_fixture,
                  "a recovered graph from before rows gets its schemas; one "
                  "whose schemas do not fit fails") {
  auto before_rows = evens(6);
  auto unfit = evens(8);
  unfit.edges[0].part = partitioning::hash;
  unfit.edges[0].key = {"nope"};
  recovered_jobs stored_before;
  stored_before.graphs = {before_rows, unfit};
  start(stored_before);
  auto r = result_of(before_rows.id);
  CHECK(r.state == job_state::finished);
  CHECK(values(r.collected) == std::vector<int64_t>{2, 4, 6});
  auto failed = result_of(unfit.id);
  CHECK(failed.state == job_state::failed);
  CHECK(failed.error.find("the recovered job cannot run: edge 'numbers' -> "
                          "'even': key field 'nope' is not in (")
        == 0);
  CHECK(stored().dones.size() == 2);
}

TEST_CASE_FIXTURE(dispatcher_fixture,
                  "a finished job's id with another graph of the same name is "
                  "refused") {
  auto finished = evens(8);
  job_result old;
  old.id = finished.id;
  old.name = finished.name;
  old.state = job_state::finished;
  old.graph_fingerprint = storage::job_graph_fingerprint(finished);
  recovered_jobs stored_before;
  stored_before.results = {old}; // the graph itself was cleaned up
  start(stored_before);
  CHECK(request<job_id>(dispatcher, submit_atom_v, finished) == finished.id);
  auto other = evens(9); // same name, another graph
  other.id = finished.id;
  auto err = submit_error(other);
  CHECK(err == make_error(errc::duplicate_job));
  CHECK(stored().puts.empty()); // nothing ran again
}

TEST_CASE_FIXTURE(dispatcher_fixture,
                  "a stored result records its job's graph fingerprint") {
  start();
  auto g = evens(4);
  CHECK(request<job_id>(dispatcher, submit_atom_v, g) == g.id);
  CHECK(result_of(g.id).state == job_state::finished);
  REQUIRE(stored().dones.size() == 1);
  CHECK(stored().dones[0].graph_fingerprint
        == storage::job_graph_fingerprint(g));
}

TEST_CASE_FIXTURE(dispatcher_fixture,
                  "while a job's result is stored, status, cancel and the "
                  "driver's output come from the result, the result itself "
                  "once it is stored") {
  // `weir wait` right after a job ended asked for its status here, and the
  // Dispatcher asked the ended JobMaster: request_receiver_down, exit 3.
  start();
  stored().hold_results = true;
  auto g = evens(10);
  self->send(dispatcher, submit_atom_v, g);
  run_until([&] { return !stored().held.empty(); });
  REQUIRE(stored().held.size() == 1); // the job ended, its JobMaster too
  self->receive([](job_id) {});
  // From here on the clock stands still: the held write must not time out.
  auto ask = [&](auto... xs) {
    auto reply = self->request(dispatcher, caf::infinite, xs...);
    sched.run();
    return reply;
  };
  auto fail = [](caf::error& err) { FAIL_CHECK(describe(err)); };
  ask(status_atom_v, g.id, true)
    .receive(
      [](job_status& s) {
        CHECK(s.state == job_state::finished);
        CHECK(s.metrics.records_out == 5);
      },
      fail);
  ask(cancel_atom_v, g.id)
    .receive(
      [](cancel_outcome& o) {
        CHECK(o == cancel_outcome{job_state::finished, job_state::finished});
      },
      fail);
  ask(collect_atom_v, g.id, int64_t{0})
    .receive(
      [](std::vector<collected_table>& rows) {
        CHECK(values(rows) == std::vector<int64_t>{2, 4, 6, 8, 10});
      },
      fail);
  auto result = ask(result_atom_v, g.id);
  CHECK(self->mailbox().peek() == nullptr); // not before it is stored
  release_held_results();
  sched.run();
  result.receive(
    [](job_result& r) {
      CHECK(r.state == job_state::finished);
      CHECK(r.error.empty());
      CHECK(values(r.collected) == std::vector<int64_t>{2, 4, 6, 8, 10});
    },
    fail);
}

TEST_CASE_FIXTURE(dispatcher_fixture, "a canceled job ends CANCELED") {
  start();
  auto g = evens(1000000, 2);
  self->send(dispatcher, submit_atom_v, g);
  expect((submit_atom, job_graph), from(self).to(dispatcher));
  expect((put_atom, job_graph), from(dispatcher).to(store));
  expect((bool), from(store).to(dispatcher));
  self->receive([](job_id) {});
  self->send(dispatcher, cancel_atom_v, g.id);
  run();
  auto r = result_of(g.id);
  CHECK(r.state == job_state::canceled);
  CHECK(r.error == "job was canceled");
}

TEST_CASE_FIXTURE(dispatcher_fixture,
                  "a cancel that arrives before the job is stored is honoured") {
  start();
  auto g = evens(1000000, 2);
  self->send(dispatcher, submit_atom_v, g);
  expect((submit_atom, job_graph), from(self).to(dispatcher));
  self->send(dispatcher, cancel_atom_v, g.id);
  expect((cancel_atom, job_id), from(self).to(dispatcher));
  expect((cancel_outcome), from(dispatcher).to(self)
                             .with(cancel_outcome{job_state::created,
                                                  job_state::cancelling}));
  run();
  self->receive([](job_id) {});
  auto r = result_of(g.id);
  CHECK(r.state == job_state::canceled);
  CHECK(r.metrics.records_in == 0);
  REQUIRE(stored().dones.size() == 1);
  CHECK(stored().dones[0].state == job_state::canceled);
}
