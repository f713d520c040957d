// Every message type survives CAF's binary serialization unchanged: the
// precondition for sending it between processes.
#include "caf_doctest.hpp"

#include "messages/barrier.hpp"
#include "messages/deployment.hpp"
#include "messages/job_result.hpp"
#include "messages/job_store.hpp"
#include "messages/resource_manager.hpp"
#include "messages/slots.hpp"
#include "tests/rows.hpp"

using namespace weir;
using namespace weir::test;

namespace {

job_graph sample_graph() {
  job_graph g;
  g.id = job_id::random();
  g.name = "wordcount";
  g.vertices = {{"lines", "text_file", {{"path", "in.txt"}}, 2},
                {"words", "flat_map", {{"function", "tokenize"}}, 2},
                {"counts", "count", {}, 2}};
  g.edges = {{"lines", "words", partitioning::forward},
             {"words", "counts", partitioning::hash}};
  // The schemas and key the planner derives.
  g.vertices[0].output = default_schema::keyed_lines();
  g.vertices[1].output = default_schema::keyed_numbers();
  g.vertices[2].output = default_schema::keyed_numbers();
  g.edges[1].key = {"key"};
  return g;
}

} // namespace

TEST_CASE_FIXTURE(actor_fixture, "control-plane messages round-trip") {
  auto g = sample_graph();
  CHECK(roundtrip(g) == g);
  job_result r;
  r.id = g.id;
  r.name = "wordcount";
  r.state = job_state::failed;
  r.error = "vertex 'lines': cannot open 'in.txt'";
  r.start_time_ms = 1;
  r.end_time_ms = 99;
  r.metrics = {10, 20};
  r.collected = test::sample_tables();
  CHECK(roundtrip(r) == r);
  auto id = execution_attempt_id::random();
  CHECK(roundtrip(id) == id);
  resource_profile p{1.5, 1024, 64, 32};
  CHECK(roundtrip(p) == p);
  slot_report report{{slot_status{3, p, allocation_id::random(), g.id}}};
  auto back = roundtrip(report);
  REQUIRE(back.slots.size() == 1);
  CHECK(back.slots[0].index == 3);
  CHECK(back.slots[0].profile == p);
  CHECK(back.slots[0].alloc == report.slots[0].alloc);
  CHECK(back.slots[0].job == g.id);
}

TEST_CASE_FIXTURE(actor_fixture,
                  "deployments, row batches and record batches round-trip") {
  task_deployment d;
  d.job = job_id::random();
  d.attempt = execution_attempt_id::random();
  d.alloc = allocation_id::random();
  d.task_index = 1;
  d.subtask_index = 3;
  d.parallelism = 4;
  d.job_name = "wordcount";
  d.task_name = "counts";
  d.chain = {{"counts", "count", {}, 4}};
  d.chain[0].output = default_schema::keyed_numbers();
  d.input = default_schema::keyed_numbers();
  d.input_key = {"key"};
  d.inputs = {{2, true}};
  d.outputs = {{partitioning::hash, 3, 0, "sum", {{"field", "value"}}, {"key"}}};
  d.bounded = false;
  auto back = roundtrip(d);
  CHECK(back.job == d.job);
  CHECK(back.attempt == d.attempt);
  CHECK(back.chain == d.chain);
  CHECK(back.chain.at(0).output == default_schema::keyed_numbers());
  CHECK(back.input == d.input);
  CHECK(back.input_key == d.input_key);
  CHECK(back.inputs.at(0).channels == 2);
  CHECK(back.inputs.at(0).preaggregated);
  CHECK(back.outputs.at(0).part == partitioning::hash);
  CHECK(back.outputs.at(0).combine == "sum");
  CHECK(back.outputs.at(0).combine_params == d.outputs[0].combine_params);
  CHECK(back.outputs.at(0).key == std::vector<std::string>{"key"});
  CHECK_FALSE(back.bounded);
  // What subtasks send each other: rows (text with a tab, an event time, a
  // null); what collect sinks hand over: records.
  auto rows = to_rows(default_schema::keyed_lines(),
                      {record::string("k", "-5", 3),
                       record::string("", "\xc3\xbc\ttab", 0)});
  rows.columns[1].push_null();
  rows.columns[0].push_str("n");
  ++rows.rows;
  rows.push_time(-1);
  CHECK(roundtrip(rows) == rows);
  for (auto& t : test::sample_tables())
    CHECK(roundtrip(t) == t);
  checkpoint_barrier barrier{42, checkpoint_kind::savepoint};
  CHECK(roundtrip(barrier) == barrier);
}
