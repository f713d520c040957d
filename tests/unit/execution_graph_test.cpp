// The JobMaster's execution_graph.
#include <doctest/doctest.h>

#include "actors/job_master/attempt_adoption.hpp"
#include "tests/unit/runtime_fixtures.hpp"

using namespace weir;
using namespace weir::test;

// -- execution_graph ----------------------------------------------------------

TEST_SUITE("execution_graph") {

TEST_CASE("word count: tasks, subtasks and slots") {
  execution_graph eg{word_count()};
  auto& tasks = eg.tasks();
  REQUIRE(tasks.size() == 3u);
  CHECK(tasks[0].name == "lines -> words");
  CHECK(tasks[1].name == "counts");
  CHECK(tasks[2].name == "out");
  CHECK(show(tasks[0].vertices) == "0 1");
  CHECK(show(tasks[1].vertices) == "2");
  CHECK(show(tasks[2].vertices) == "3");
  CHECK(tasks[0].parallelism == 2);
  CHECK(tasks[1].parallelism == 2);
  CHECK(tasks[2].parallelism == 1);
  CHECK(show(tasks[0].inputs) == "");
  CHECK(show(tasks[0].outputs) == "1");
  CHECK(show(tasks[1].inputs) == "1");
  CHECK(show(tasks[1].outputs) == "2");
  CHECK(show(tasks[2].inputs) == "2");
  CHECK(show(tasks[2].outputs) == "");
  CHECK(tasks[0].first_execution == 0);
  CHECK(tasks[1].first_execution == 2);
  CHECK(tasks[2].first_execution == 4);

  CHECK(eg.size() == 5u);
  auto& xs = eg.executions();
  std::vector<std::pair<int32_t, int32_t>> positions;
  for (auto& x : xs)
    positions.emplace_back(x.task, x.subtask);
  CHECK(positions
        == std::vector<std::pair<int32_t, int32_t>>{
          {0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}});
  std::set<execution_attempt_id> attempts;
  for (auto& x : xs) {
    CHECK(x.state == execution_state::created);
    CHECK(x.attempt.valid());
    attempts.insert(x.attempt);
  }
  CHECK(attempts.size() == 5u);

  CHECK(eg.slots_needed() == 2);
  CHECK(show(eg.executions_in_slot(0)) == "0 2 4");
  CHECK(show(eg.executions_in_slot(1)) == "1 3");
  CHECK(eg.executions_in_slot(2).empty());
  CHECK(eg.bounded());
}

TEST_CASE("word count: deployment descriptors") {
  auto g = word_count();
  execution_graph eg{g};
  auto alloc = allocation_id::random();

  SUBCASE("the chained source task") {
    auto d = eg.deployment(1, alloc);
    CHECK(d.job == g.id);
    CHECK(d.attempt == eg.executions()[1].attempt);
    CHECK(d.alloc == alloc);
    CHECK(d.task_index == 0);
    CHECK(d.subtask_index == 1);
    CHECK(d.parallelism == 2);
    CHECK(d.task_name == "lines -> words");
    REQUIRE(d.chain.size() == 2u);
    CHECK(d.chain[0] == g.vertices[0]);
    CHECK(d.chain[1] == g.vertices[1]);
    CHECK(d.inputs.empty());
    REQUIRE(d.outputs.size() == 1u);
    CHECK(d.outputs[0].part == partitioning::hash);
    CHECK(d.outputs[0].consumers == 2);
    CHECK(d.outputs[0].channel_base == 0);
    CHECK(d.outputs[0].combine == "count");
    CHECK(d.bounded);
  }
  SUBCASE("the keyed aggregation") {
    auto d = eg.deployment(3, alloc);
    CHECK(d.attempt == eg.executions()[3].attempt);
    CHECK(d.task_index == 1);
    CHECK(d.subtask_index == 1);
    CHECK(d.parallelism == 2);
    CHECK(d.task_name == "counts");
    CHECK(show(d.chain) == "counts");
    REQUIRE(d.inputs.size() == 1u);
    CHECK(d.inputs[0].channels == 2);
    CHECK(d.inputs[0].preaggregated);
    REQUIRE(d.outputs.size() == 1u);
    CHECK(d.outputs[0].part == partitioning::rebalance);
    CHECK(d.outputs[0].consumers == 1);
    CHECK(d.outputs[0].channel_base == 0);
    CHECK(d.outputs[0].combine == "");
  }
  SUBCASE("the sink") {
    auto d = eg.deployment(4, alloc);
    CHECK(d.task_index == 2);
    CHECK(d.subtask_index == 0);
    CHECK(d.parallelism == 1);
    CHECK(d.task_name == "out");
    CHECK(show(d.chain) == "out");
    REQUIRE(d.inputs.size() == 1u);
    CHECK(d.inputs[0].channels == 2);
    CHECK_FALSE(d.inputs[0].preaggregated);
    CHECK(d.outputs.empty());
  }
  SUBCASE("consumers") {
    CHECK(show(eg.consumers(0)) == "[2 3]");
    CHECK(show(eg.consumers(1)) == "[2 3]");
    CHECK(show(eg.consumers(2)) == "[4]");
    CHECK(show(eg.consumers(3)) == "[4]");
    CHECK(eg.consumers(4).empty());
  }
}

TEST_CASE("a vertex with two inputs: gates in edge order and channel bases") {
  auto g = two_inputs();
  execution_graph eg{g};
  auto& tasks = eg.tasks();
  REQUIRE(tasks.size() == 5u);
  std::vector<std::string> names;
  for (auto& t : tasks)
    names.push_back(t.name);
  CHECK(names == std::vector<std::string>{"a", "b", "j", "k", "out"});
  CHECK(eg.size() == 10u);
  CHECK(eg.slots_needed() == 3);
  CHECK(show(eg.executions_in_slot(0)) == "0 3 5 7 9");
  CHECK(show(eg.executions_in_slot(1)) == "1 4 6 8");
  CHECK(show(eg.executions_in_slot(2)) == "2");
  auto alloc = allocation_id::random();

  // j's gates: the broadcast from a (3 channels), then the forward from b (1).
  auto j = eg.deployment(6, alloc);
  CHECK(j.task_name == "j");
  CHECK(j.subtask_index == 1);
  REQUIRE(j.inputs.size() == 2u);
  CHECK(j.inputs[0].channels == 3);
  CHECK_FALSE(j.inputs[0].preaggregated);
  CHECK(j.inputs[1].channels == 1);
  CHECK_FALSE(j.inputs[1].preaggregated);
  REQUIRE(j.outputs.size() == 1u);
  CHECK(j.outputs[0].part == partitioning::hash);
  CHECK(j.outputs[0].combine == "sum");

  auto a = eg.deployment(2, alloc);
  REQUIRE(a.outputs.size() == 1u);
  CHECK(a.outputs[0].part == partitioning::broadcast);
  CHECK(a.outputs[0].consumers == 2);
  CHECK(a.outputs[0].channel_base == 0);
  CHECK(a.outputs[0].combine == "");

  auto b = eg.deployment(4, alloc);
  CHECK(b.task_name == "b");
  REQUIRE(b.outputs.size() == 1u);
  CHECK(b.outputs[0].part == partitioning::forward);
  CHECK(b.outputs[0].consumers == 2);
  CHECK(b.outputs[0].channel_base == 3);

  auto k = eg.deployment(7, alloc);
  REQUIRE(k.inputs.size() == 1u);
  CHECK(k.inputs[0].channels == 2);
  CHECK(k.inputs[0].preaggregated);

  CHECK(show(eg.consumers(2)) == "[5 6]");
  CHECK(show(eg.consumers(3)) == "[5 6]");
  CHECK(show(eg.consumers(6)) == "[7 8]");

  // The channels the producers' gates use tile j's input channels exactly
  // (a and b are sequences: they emit numbers).
  auto numbers = default_schema::numbers();
  std::set<int32_t> channels;
  for (int32_t i = 0; i < 3; ++i)
    channels.insert(
      output_gate{a.outputs[0], i, exchange_options{}, numbers}.channel());
  for (int32_t i = 0; i < 2; ++i) {
    output_gate gate{b.outputs[0], i, exchange_options{}, numbers};
    CHECK(gate.targets() == std::vector<int32_t>{i});
    channels.insert(gate.channel());
  }
  CHECK(channels == std::set<int32_t>{0, 1, 2, 3});
}

TEST_CASE("deployments carry the schemas and keys the planner derived") {
  // Schemas and keys as derive_schemas leaves them (set by hand here).
  auto g = two_inputs();
  auto numbers = default_schema::keyed_numbers();
  g.vertices[0].output = numbers; // a
  g.vertices[1].output = numbers; // b
  g.vertices[2].output = numbers; // j
  g.vertices[3].output = default_schema::numbers(); // k
  g.vertices[3].params = {{"field", "value"}};
  g.edges[2].key = {"key"}; // j -hash-> k
  execution_graph eg{g};
  auto alloc = allocation_id::random();
  // a (a source): no input; its broadcast output has no key.
  auto a = eg.deployment(0, alloc);
  CHECK(a.input.empty());
  CHECK(a.input_key.empty());
  REQUIRE(a.outputs.size() == 1u);
  CHECK(a.outputs[0].key.empty());
  CHECK(a.outputs[0].combine_params.empty());
  // j: its inputs' schema, unkeyed (broadcast and forward); its hash output
  // keyed, with k's parameters for the combiner.
  auto j = eg.deployment(6, alloc);
  CHECK(j.task_name == "j");
  CHECK(j.input == numbers);
  CHECK(j.input_key.empty());
  REQUIRE(j.outputs.size() == 1u);
  CHECK(j.outputs[0].combine == "sum");
  CHECK(j.outputs[0].key == std::vector<std::string>{"key"});
  CHECK(j.outputs[0].combine_params
        == std::map<std::string, std::string>{{"field", "value"}});
  // k: keyed input; out: k's output.
  auto k = eg.deployment(7, alloc);
  CHECK(k.task_name == "k");
  CHECK(k.input == numbers);
  CHECK(k.input_key == std::vector<std::string>{"key"});
  REQUIRE(k.outputs.size() == 1u);
  CHECK(k.outputs[0].key.empty());
  CHECK(k.outputs[0].combine_params.empty());
  auto out = eg.deployment(9, alloc);
  CHECK(out.task_name == "out");
  CHECK(out.input == default_schema::numbers());
  CHECK(out.input_key.empty());
}

TEST_CASE("combiners only on hash edges into keyed aggregations") {
  SUBCASE("count, sum, min and max") {
    for (std::string op : {"count", "sum", "min", "max"}) {
      CAPTURE(op);
      execution_graph eg{generator_into(op, {{"count", "10"}})};
      REQUIRE(eg.tasks().size() == 2u);
      CHECK(eg.tasks()[1].name == "agg -> sink");
      auto src = eg.deployment(0, allocation_id::random());
      REQUIRE(src.outputs.size() == 1u);
      CHECK(src.outputs[0].combine == op);
      auto agg = eg.deployment(2, allocation_id::random());
      REQUIRE(agg.inputs.size() == 1u);
      CHECK(agg.inputs[0].preaggregated);
    }
  }
  SUBCASE("not into a map") {
    execution_graph eg{generator_into("map", {{"count", "10"}})};
    auto src = eg.deployment(0, allocation_id::random());
    CHECK(src.outputs[0].combine == "");
    CHECK_FALSE(eg.deployment(2, allocation_id::random()).inputs[0].preaggregated);
  }
  SUBCASE("not on a rebalance edge") {
    execution_graph eg{
      generator_into("count", {{"count", "10"}}, partitioning::rebalance)};
    auto src = eg.deployment(0, allocation_id::random());
    CHECK(src.outputs[0].combine == "");
    CHECK_FALSE(eg.deployment(2, allocation_id::random()).inputs[0].preaggregated);
  }
}

TEST_CASE("a generator without count makes the job unbounded") {
  execution_graph unbounded{generator_into("count", {})};
  CHECK_FALSE(unbounded.bounded());
  CHECK_FALSE(unbounded.deployment(3, allocation_id::random()).bounded);
  execution_graph rate_only{generator_into("count", {{"rate", "100"}})};
  CHECK_FALSE(rate_only.bounded());
  execution_graph counted{generator_into("count", {{"count", "5"}})};
  CHECK(counted.bounded());
  CHECK(counted.deployment(3, allocation_id::random()).bounded);
  CHECK(execution_graph{two_inputs()}.bounded());
}

TEST_CASE("find maps current attempts to flat indices") {
  execution_graph eg{word_count()};
  for (size_t i = 0; i < eg.size(); ++i)
    CHECK(eg.find(eg.executions()[i].attempt) == static_cast<int32_t>(i));
  CHECK(eg.find(execution_attempt_id::random()) == -1);
  CHECK(eg.find(execution_attempt_id{}) == -1);
}

TEST_CASE("every restart deploys the next attempt number") {
  execution_graph eg{word_count()};
  auto alloc = allocation_id::random();
  CHECK(eg.deployment(3, alloc).attempt_number == 0);
  eg.restart();
  eg.restart();
  for (int32_t i = 0; i < static_cast<int32_t>(eg.size()); ++i)
    CHECK(eg.deployment(i, alloc).attempt_number == 2);
}

TEST_CASE("transitions follow Flink's state machine and keep counts") {
  using es = execution_state;
  execution_graph eg{word_count()};
  CHECK(eg.count(es::created) == 5);
  CHECK(eg.count(es::running) == 0);
  CHECK_FALSE(eg.all_finished());
  CHECK_FALSE(eg.all_terminal());

  CHECK_FALSE(eg.transition(0, es::finished)); // not running yet
  CHECK_FALSE(eg.transition(0, es::created));
  CHECK(eg.executions()[0].state == es::created);
  CHECK(eg.count(es::created) == 5);

  for (int32_t i = 0; i < 5; ++i) {
    CHECK(eg.transition(i, es::scheduled));
    CHECK(eg.transition(i, es::deploying));
  }
  CHECK(eg.count(es::created) == 0);
  CHECK(eg.count(es::deploying) == 5);
  CHECK_FALSE(eg.transition(0, es::scheduled)); // backwards
  CHECK(eg.transition(0, es::initializing));
  CHECK(eg.transition(0, es::running));
  CHECK(eg.transition(1, es::running)); // skipping INITIALIZING is allowed
  CHECK(eg.count(es::running) == 2);
  CHECK(eg.count(es::deploying) == 3);
  CHECK(eg.executions()[0].state == es::running);

  CHECK(eg.transition(0, es::finished));
  CHECK_FALSE(eg.transition(0, es::failed)); // terminal
  CHECK_FALSE(eg.transition(0, es::canceling));
  CHECK(eg.count(es::finished) == 1);

  CHECK(eg.transition(1, es::canceling));
  CHECK_FALSE(eg.transition(1, es::canceling));
  CHECK_FALSE(eg.transition(1, es::running));
  CHECK_FALSE(eg.transition(1, es::finished));
  CHECK(eg.transition(1, es::canceled));
  CHECK(eg.transition(2, es::failed));
  CHECK(eg.count(es::canceling) == 0);
  CHECK(eg.count(es::canceled) == 1);
  CHECK(eg.count(es::failed) == 1);
  CHECK(eg.count(es::deploying) == 2);

  int32_t total = 0;
  for (int s = 0; s <= static_cast<int>(es::failed); ++s)
    total += eg.count(static_cast<es>(s));
  CHECK(total == 5);
  CHECK_FALSE(eg.all_terminal());
  CHECK(eg.transition(3, es::canceled));
  CHECK(eg.transition(4, es::canceled));
  CHECK(eg.all_terminal());
  CHECK_FALSE(eg.all_finished());
}

TEST_CASE("all_finished once every subtask finished") {
  using es = execution_state;
  execution_graph eg{word_count()};
  for (int32_t i = 0; i < 5; ++i) {
    CHECK_FALSE(eg.all_finished());
    REQUIRE(eg.transition(i, es::running));
    REQUIRE(eg.transition(i, es::finished));
  }
  CHECK(eg.all_finished());
  CHECK(eg.all_terminal());
  CHECK(eg.count(es::finished) == 5);
}

TEST_CASE("total_metrics: records in of sources, records out of sinks") {
  execution_graph eg{word_count()};
  eg.set_metrics(0, io_metrics{10, 40});  // lines -> words, subtask 0
  eg.set_metrics(1, io_metrics{5, 20});   // lines -> words, subtask 1
  eg.set_metrics(2, io_metrics{30, 7});   // counts
  eg.set_metrics(3, io_metrics{30, 8});   // counts
  eg.set_metrics(4, io_metrics{15, 15});  // out
  auto total = eg.total_metrics();
  CHECK(total.records_in == 15);
  CHECK(total.records_out == 15);
  // Replacing, not adding.
  eg.set_metrics(4, io_metrics{15, 12});
  CHECK(eg.total_metrics().records_out == 12);
  CHECK(eg.executions()[4].metrics.records_in == 15);
  // A subtask's load stays its own: a job's total has none (io_metrics).
  io_metrics loaded{15, 12};
  loaded.load.bytes_in = 100;
  loaded.load.busy_ms = 7;
  loaded.load.backpressured_ms_per_s = 500;
  eg.set_metrics(4, loaded);
  CHECK(eg.executions()[4].metrics.load.busy_ms == 7);
  CHECK(eg.total_metrics().load.bytes_in == 0);
  CHECK(eg.total_metrics().load.busy_ms == 0);
  CHECK(eg.total_metrics().load.backpressured_ms_per_s == 0);
}

TEST_CASE("total_metrics: each vertex's records and counters, summed over "
          "its subtasks") {
  execution_graph eg{word_count()};
  auto chain = [](int64_t lines, int64_t words, int64_t bad) {
    io_metrics m{lines, words};
    m.vertices = {{"lines", lines, lines, {}},
                  {"words", lines, words, {{"bad", bad}, {"zero", 0}}}};
    return m;
  };
  eg.set_metrics(0, chain(10, 40, 1)); // lines -> words, subtask 0
  eg.set_metrics(1, chain(5, 20, 2));  // lines -> words, subtask 1
  io_metrics counts{30, 7};
  counts.vertices = {{"counts", 30, 7, {{"keys", 7}}}};
  eg.set_metrics(2, counts);
  auto total = eg.total_metrics();
  // Every vertex in the graph's order; "out" has not reported yet.
  CHECK(total.vertices
        == std::vector<vertex_metrics>{
          {"lines", 15, 15, {}},
          {"words", 15, 60, {{"bad", 3}, {"zero", 0}}},
          {"counts", 30, 7, {{"keys", 7}}},
          {"out", 0, 0, {}}});
  CHECK(counter_lines(total)
        == std::vector<std::string>{"Counter words.bad: 3",
                                    "Counter words.zero: 0",
                                    "Counter counts.keys: 7"});
}

} // TEST_SUITE

// -- adoption after a jobmanager failover -------------------------------------

namespace {

/// What a worker reports for execution `flat` of `eg` (attempt number 3).
running_attempt reported(const execution_graph& eg, size_t flat) {
  auto& x = eg.executions()[flat];
  auto& t = eg.tasks()[static_cast<size_t>(x.task)];
  running_attempt r;
  r.attempt = execution_attempt_id::random();
  r.attempt_number = 3;
  r.task_index = x.task;
  r.subtask_index = x.subtask;
  r.parallelism = t.parallelism;
  r.head = eg.graph().vertices[static_cast<size_t>(t.vertices.front())].id;
  return r;
}

std::vector<running_attempt> all_reported(const execution_graph& eg) {
  std::vector<running_attempt> out;
  for (size_t i = eg.size(); i-- > 0;) // in any order
    out.push_back(reported(eg, i));
  return out;
}

} // namespace

TEST_SUITE("adoption") {

TEST_CASE("every execution running once is adopted, by flat index") {
  execution_graph eg{word_count()};
  auto reports = all_reported(eg);
  auto plan = plan_adoption(eg, reports);
  REQUIRE(plan.problem == "");
  REQUIRE(plan.attempts.size() == eg.size());
  for (size_t i = 0; i < eg.size(); ++i) {
    CHECK(plan.attempts[i].task_index == eg.executions()[i].task);
    CHECK(plan.attempts[i].subtask_index == eg.executions()[i].subtask);
  }
  // Adopted: the graph knows the reported attempts, running, with their
  // attempt numbers; its own former attempts no longer match.
  auto old = eg.executions()[0].attempt;
  for (size_t i = 0; i < eg.size(); ++i)
    eg.adopt(static_cast<int32_t>(i), plan.attempts[i].attempt,
             plan.attempts[i].attempt_number);
  CHECK(eg.count(execution_state::running) == static_cast<int32_t>(eg.size()));
  CHECK(eg.find(old) == -1);
  CHECK(eg.find(plan.attempts[4].attempt) == 4);
  CHECK(eg.executions()[2].attempt_number == 3);
  // A restart goes on counting from them.
  eg.restart();
  CHECK(eg.executions()[2].attempt_number == 4);
}

TEST_CASE("a subtask that no longer runs, or runs twice, is no adoption") {
  execution_graph eg{word_count()};
  auto missing = all_reported(eg);
  missing.erase(missing.begin() + 1); // flat 3: counts (2/2)
  CHECK(plan_adoption(eg, missing).problem == "'counts' (2/2) no longer runs");
  auto twice = all_reported(eg);
  twice.push_back(reported(eg, 0));
  CHECK(plan_adoption(eg, twice).problem
        == "'lines -> words' (1/2) runs twice");
}

TEST_CASE("another parallelism or another chain is no adoption") {
  execution_graph eg{word_count()};
  auto rescaled = all_reported(eg);
  rescaled[0].parallelism = 3;
  CHECK(plan_adoption(eg, rescaled).problem
        == "'out' runs at parallelism 3, the job's graph has 1");
  auto other = all_reported(eg);
  other[4].head = "sentences";
  CHECK(plan_adoption(eg, other).problem
        == "task 0 runs chain 'sentences', the job's is 'lines'");
  auto beyond = all_reported(eg);
  beyond[0].task_index = 7;
  CHECK(plan_adoption(eg, beyond).problem
        == "a subtask of task 7 runs, the job has 3 tasks");
}

} // TEST_SUITE
