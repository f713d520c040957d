// The JSON form of the client API's values (client/wire.hpp): what a
// jobmanager writes, a client reads back unchanged; what does not fit is
// one line naming it.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "client/wire.hpp"
#include "messages/errors.hpp"
#include "tests/rows.hpp"

using namespace weir;

namespace {

job_status a_status() {
  job_status s;
  s.id = job_id::random();
  s.name = "keyed sum";
  s.state = job_state::restarting;
  s.start_time_ms = 1764931200123;
  s.error = "vertex 'sum' threw: boom";
  s.subtasks_total = 4;
  s.metrics.records_in = 1'000'000'000'000;
  s.metrics.records_skipped = 3;
  s.metrics.skipped_note = "line 7: not a number";
  s.metrics.vertices = {{"sum", 10, 7, {{"late", 2}, {"seen", 12}}}};
  s.restarts = 2;
  subtask_status x;
  x.task = "numbers -> sum";
  x.subtask = 1;
  x.parallelism = 2;
  x.state = execution_state::deploying;
  x.location = "tm-1";
  x.metrics.load.busy_ms_per_s = 512.5;
  x.metrics.load.input_queue = 3;
  s.subtasks = {x};
  s.slot_profile = resource_profile{1.5, 512, 64, 0};
  s.slots_missing = 1;
  s.checkpoints.completed = 4;
  s.checkpoints.history = {{7, "COMPLETED", true, 1, 2, 3, 4, 5, 6, 6, ""}};
  s.exceptions = {{"boom", 17, "sum (1/2)", "tm-1"}};
  return s;
}

} // namespace

TEST_CASE("a job status reads back exactly as written") {
  auto s = a_status();
  auto text = wire::encode(s).dump();
  auto back = wire::decode<job_status>(nlohmann::json::parse(text), "status");
  REQUIRE(back);
  CHECK(wire::encode(*back) == wire::encode(s));
  CHECK(back->id == s.id);
  CHECK(back->state == job_state::restarting);
  CHECK(back->subtasks.at(0).state == execution_state::deploying);
  CHECK(back->metrics.vertices.at(0).counters.at("late") == 2);
  CHECK(back->metrics.records_in == 1'000'000'000'000);
  // Names, not numbers: readable with curl, stable across reorderings.
  auto j = wire::encode(s);
  CHECK(j["state"] == "RESTARTING");
  CHECK(j["id"] == s.id.to_string());
}

TEST_CASE("a job result with rows and a JobGraph read back exactly") {
  job_result r;
  r.id = job_id::random();
  r.state = job_state::failed;
  r.collected = test::sample_tables();
  r.exit_status = 3;
  auto back = wire::decode<job_result>(wire::encode(r), "result");
  REQUIRE(back);
  CHECK(*back == r);

  job_graph g;
  g.id = job_id::random();
  g.name = "g";
  g.vertices = {{"src", "sequence", {{"to", "9"}}, 2,
                 schema{{{"key", field_type::string, false},
                         {"value", field_type::int64, true}}}},
                {"out", "collect", {}, 1, {}}};
  g.edges = {{"src", "out", partitioning::hash, {"key"}}};
  g.config = {{"restart-strategy.type", "none"}};
  g.code.libraries = {{"libx.so", std::string(64, 'a'), "/tmp/libx.so"}};
  g.priority = job_priority::daemon;
  auto graph = wire::decode<job_graph>(wire::encode(g), "graph");
  REQUIRE(graph);
  CHECK(*graph == g);
}

TEST_CASE("what does not fit is an error naming what was read") {
  auto j = wire::encode(a_status());
  j["state"] = "SLEEPING";
  auto bad = wire::decode<job_status>(j, "job status");
  REQUIRE_FALSE(bad);
  CHECK(bad.error() == make_error(errc::invalid_job));
  CHECK(describe(bad.error()) == "job status: unknown value 'SLEEPING'");
  auto id = wire::encode(a_status());
  id["id"] = "nope";
  CHECK(describe(wire::decode<job_status>(id, "job status").error())
        == "job status: 'nope' is not an id (32 hex characters)");
  auto type = wire::encode(a_status());
  type["restarts"] = "two";
  CHECK(describe(wire::decode<job_status>(type, "job status").error())
        .rfind("job status: type must be number", 0)
        == 0);
  // Fields a reader does not know are ignored; missing ones keep defaults.
  auto sparse = nlohmann::json{{"name", "n"}, {"later", 1}};
  auto s = wire::decode<job_status>(sparse, "job status");
  REQUIRE(s);
  CHECK(s->name == "n");
  CHECK(s->state == job_state::created);
}
