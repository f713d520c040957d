// The Dispatcher's table of jobs (actors/dispatcher/job_table.hpp): its
// decisions without a Dispatcher. JobMaster handles are idle actors of a
// plain actor system; no message is sent to them.
#include <doctest/doctest.h>

#include <caf/actor_cast.hpp>
#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>

#include "actors/dispatcher/job_table.hpp"
#include "storage/job_graph_store.hpp"

using namespace weir;
using end = job_table::job_master_end;

namespace {

job_graph graph(std::string name) {
  job_graph g;
  g.id = job_id::random();
  g.name = std::move(name);
  g.vertices = {{"numbers", "sequence", {{"from", "1"}, {"to", "9"}}, 1},
                {"out", "discard", {}, 1}};
  g.edges = {{"numbers", "out", partitioning::forward}};
  return g;
}

job_result result_of(const job_graph& g, job_state state) {
  job_result r;
  r.id = g.id;
  r.name = g.name;
  r.state = state;
  return r;
}

struct table_fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};
  /// Destroyed before the system, which then waits for the idle actors,
  /// which end once no handle to them is left.
  job_table jobs;

  /// A handle of an idle actor (a JobMaster or ResourceManager stand-in).
  template <class Handle = caf::actor>
  Handle idle() {
    auto h = sys.spawn([] { return caf::behavior{[](int32_t) {}}; });
    return caf::actor_cast<Handle>(h);
  }
};

} // namespace

TEST_CASE_FIXTURE(table_fixture, "a submission again is the same job or a "
                                 "different one") {
  auto g = graph("a");
  CHECK_FALSE(jobs.same_as_known(g).has_value());
  jobs.add(g, 5);
  CHECK(jobs.same_as_known(g) == true);
  auto other = graph("b");
  other.id = g.id;
  CHECK(jobs.same_as_known(other) == false);
  CHECK(jobs.find(g.id)->submitted_ms == 5);
}

TEST_CASE_FIXTURE(table_fixture, "a job known by its result alone is compared "
                                 "by fingerprint, older results by name") {
  auto g = graph("a");
  auto with_fingerprint = result_of(g, job_state::finished);
  with_fingerprint.graph_fingerprint = storage::job_graph_fingerprint(g);
  recovered_jobs rec;
  rec.results = {with_fingerprint};
  jobs.recover(rec, 0);
  auto renamed = g;
  renamed.vertices[0].params["to"] = "10";
  CHECK(jobs.same_as_known(g) == true);
  CHECK(jobs.same_as_known(renamed) == false);
  job_table old;
  rec.results[0].graph_fingerprint = 0;
  old.recover(rec, 0);
  CHECK(old.same_as_known(renamed) == true); // same name
}

TEST_CASE_FIXTURE(table_fixture, "recovery runs stored graphs without a "
                                 "result, in order") {
  auto done = graph("done");
  auto first = graph("first");
  auto second = graph("second");
  recovered_jobs rec;
  rec.graphs = {first, done, second};
  rec.results = {result_of(done, job_state::finished)};
  CHECK(jobs.recover(rec, 7) == std::vector<job_id>{first.id, second.id});
  CHECK(jobs.find(done.id)->result->state == job_state::finished);
  CHECK(jobs.find(first.id)->graph == first);
  CHECK(jobs.find(second.id)->submitted_ms == 7);
}

TEST_CASE_FIXTURE(table_fixture, "a JobMaster's end: crash, lost "
                                 "ResourceManager, or nothing to do") {
  auto rm = idle();
  auto g = graph("a");
  auto& e = jobs.add(g, 0);
  auto jm = idle<job_master_actor>();
  jobs.started(e, jm, rm.address());
  CHECK(jobs.job_masters().size() == 1);
  SUBCASE("a crash") {
    auto d = jobs.job_master_ended(jm.address(), false, rm.address());
    CHECK(d.what == end::crashed);
    CHECK(d.job == g.id);
    CHECK(jobs.job_masters().empty());
  }
  SUBCASE("its ResourceManager is still the current one: wait for the next") {
    auto d = jobs.job_master_ended(jm.address(), true, rm.address());
    CHECK(d.what == end::await_resource_manager);
    CHECK(jobs.awaiting_resource_manager() == std::vector<job_id>{g.id});
    jobs.started(e, idle<job_master_actor>(), idle().address());
    CHECK(jobs.awaiting_resource_manager().empty());
  }
  SUBCASE("a new ResourceManager is known: start again now") {
    auto d = jobs.job_master_ended(jm.address(), true, idle().address());
    CHECK(d.what == end::restart);
    CHECK(jobs.awaiting_resource_manager().empty());
  }
  SUBCASE("its job is ending, or the JobMaster is an older one") {
    CHECK(jobs.begin_completion(result_of(g, job_state::finished)) == &e);
    CHECK(jobs.job_master_ended(jm.address(), false, rm.address()).what
          == end::ignore);
    CHECK(jobs.job_master_ended(jm.address(), false, rm.address()).what
          == end::ignore);
  }
}

TEST_CASE_FIXTURE(table_fixture, "a crashed JobMaster restarts with a "
                                 "backoff within its job's intensity, then "
                                 "the job fails") {
  using namespace std::chrono_literals;
  job_table limited{supervision_options{2, 10000ms}};
  auto g = graph("poisoned");
  auto& e = limited.add(g, 5);
  auto other = graph("other");
  limited.add(other, 5);
  auto rm = idle();
  auto t0 = restart_intensity::clock::now();
  auto crash = [&](restart_intensity::clock::time_point at) {
    auto jm = idle<job_master_actor>();
    ++e.incarnation;
    limited.started(e, jm, rm.address());
    CHECK(limited.job_master_ended(jm.address(), false, rm.address()).what
          == end::crashed);
    return limited.job_master_crashed(g.id, at, "boom", 42);
  };
  auto first = crash(t0);
  CHECK(first.restart);
  CHECK(first.delay == 0ms);
  CHECK(first.restarts == 1);
  CHECK(first.limit == "2 restarts within 10000 ms");
  CHECK(job_table::status_of(g.id, e).state == job_state::restarting);
  CHECK(limited.restart_due(g.id, e.incarnation) == &e);
  auto second = crash(t0 + 1ms);
  CHECK(second.restart);
  CHECK(second.delay == 100ms);
  CHECK(second.restarts == 2);
  // A stale timer (an older incarnation's) starts nothing; the due one once.
  CHECK(limited.restart_due(g.id, e.incarnation - 1) == nullptr);
  CHECK(limited.restart_due(g.id, e.incarnation) == &e);
  CHECK(limited.restart_due(g.id, e.incarnation) == nullptr);
  auto third = crash(t0 + 2ms);
  CHECK_FALSE(third.restart);
  CHECK(third.failure.id == g.id);
  CHECK(third.failure.name == "poisoned");
  CHECK(third.failure.state == job_state::failed);
  CHECK(third.failure.error
        == "its JobMaster crashed 3 times within 10000 ms (last: boom)");
  CHECK(third.failure.start_time_ms == 5);
  CHECK(third.failure.end_time_ms == 42);
  // Crashes are counted per job.
  CHECK(limited.job_master_crashed(other.id, t0 + 3ms, "boom", 43).restart);
  // Past the window, the job's crashes are forgotten.
  CHECK(crash(t0 + 20000ms).restart);
}

TEST_CASE_FIXTURE(table_fixture, "a result is stored once; the list shows "
                                 "every job's state") {
  auto created = graph("created");
  auto ended = graph("ended");
  jobs.add(created, 3);
  jobs.add(ended, 4);
  auto canceled = result_of(ended, job_state::canceled);
  REQUIRE(jobs.begin_completion(canceled) != nullptr);
  CHECK(jobs.begin_completion(canceled) == nullptr); // being stored
  auto unknown = canceled;
  unknown.id = job_id::random();
  CHECK(jobs.begin_completion(unknown) == nullptr);
  jobs.completed(ended.id);
  CHECK(jobs.begin_completion(canceled) == nullptr); // stored
  auto list = jobs.list();
  REQUIRE(list.size() == 2);
  for (auto& s : list) {
    if (s.id == created.id) {
      CHECK(s.state == job_state::created);
      CHECK(s.start_time_ms == 3);
    } else {
      CHECK(s.state == job_state::canceled);
    }
  }
}

TEST_CASE_FIXTURE(table_fixture, "while its result is stored, a job is "
                                 "answered from the result, never from its "
                                 "ended JobMaster") {
  auto g = graph("g");
  auto& e = jobs.add(g, 3);
  auto jm = idle<job_master_actor>();
  jobs.started(e, jm, idle().address());
  job_status running;
  running.id = g.id;
  running.state = job_state::running;
  jobs.reported(jm.address(), running);
  auto r = result_of(g, job_state::finished);
  r.error = "half done";
  REQUIRE(jobs.begin_completion(r) == &e);
  CHECK_FALSE(e.jm);
  CHECK(jobs.job_masters().empty());
  REQUIRE(e.ended_with() != nullptr);
  CHECK(*e.ended_with() == r);
  CHECK_FALSE(e.result); // result requests wait until it is stored
  CHECK(job_table::status_of(g.id, e).state == job_state::finished);
  CHECK(jobs.list()[0].state == job_state::finished);
  // A late report of the ended JobMaster changes nothing.
  jobs.reported(jm.address(), running);
  CHECK(jobs.list()[0].state == job_state::finished);
  auto& stored = jobs.completed(g.id, "storing the job result failed: disk");
  REQUIRE(stored.result);
  CHECK(stored.result->error
        == "half done; storing the job result failed: disk");
  CHECK_FALSE(stored.completing);
  CHECK(stored.ended_with() == &*stored.result);
}

TEST_CASE_FIXTURE(table_fixture, "list shows what the current JobMaster "
                                 "reported: CANCELLING, a slot wait") {
  auto g = graph("g");
  auto& e = jobs.add(g, 3);
  auto jm = idle<job_master_actor>();
  jobs.started(e, jm, idle().address());
  auto report = [&](job_state state, int32_t missing) {
    job_status s;
    s.id = g.id;
    s.name = g.name;
    s.state = state;
    s.slots_needed = 4;
    s.slots_missing = missing;
    return s;
  };
  jobs.reported(jm.address(), report(job_state::running, 2));
  REQUIRE(jobs.list().size() == 1);
  CHECK(jobs.list()[0].state == job_state::running);
  CHECK(jobs.list()[0].slots_missing == 2);
  jobs.reported(jm.address(), report(job_state::cancelling, 0));
  CHECK(jobs.list()[0].state == job_state::cancelling);
  CHECK(job_table::status_of(g.id, e).state == job_state::cancelling);
  // An older JobMaster's report changes nothing.
  jobs.reported(idle().address(), report(job_state::failed, 0));
  CHECK(jobs.list()[0].state == job_state::cancelling);
  // Its JobMaster gone (crashed), the job waits for the next one.
  jobs.job_master_ended(jm.address(), false, idle().address());
  CHECK(jobs.list()[0].state == job_state::created);
}

TEST_CASE("collected rows from an offset, and a cancel before the start") {
  job_result r;
  collected_table t{"out", default_schema::numbers(),
                    row_batch{default_schema::numbers()}};
  for (int64_t i = 1; i <= 3; ++i) {
    t.rows.columns[0].push_int(i);
    ++t.rows.rows;
  }
  r.collected.push_back(t);
  CHECK(row_count(job_table::collected_from(r, 1, SIZE_MAX)) == 2);
  CHECK(row_count(job_table::collected_from(r, -4, SIZE_MAX)) == 3);
  CHECK(job_table::collected_from(r, 9, SIZE_MAX).empty());
  CHECK(row_count(job_table::collected_from(r, 0, 1)) == 1); // bounded
  auto id = job_id::random();
  auto c = job_table::canceled_before_start(id, "n", 42);
  CHECK(c.id == id);
  CHECK(c.state == job_state::canceled);
  CHECK(c.error == "job was canceled");
  CHECK(c.start_time_ms == 42);
  CHECK(c.end_time_ms == 42);
  auto f = job_table::failed_before_start(id, "n", "no schema", 43);
  CHECK(f.id == id);
  CHECK(f.name == "n");
  CHECK(f.state == job_state::failed);
  CHECK(f.error == "no schema");
  CHECK(f.end_time_ms == 43);
}
