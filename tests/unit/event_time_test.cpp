// Event time's plain classes: the watermark valve, window assignment and
// the window operator (docs/event-time.md).
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "dataplane/watermark_valve.hpp"
#include "messages/row_batch.hpp"
#include "operators/builtin/windows.hpp"
#include "operators/window_function.hpp"
#include "operators/registry.hpp"
#include "storage/state/heap_backend.hpp"
#include "../rows.hpp"
#include "window_fixture.hpp"

using namespace weir;
using weir::test::fired;
using weir::test::window_fixture;

namespace {

std::vector<int64_t> starts(const ops::window_spec& w, int64_t t) {
  std::vector<int64_t> out;
  ops::assign_windows(w, t, out);
  return out;
}

/// (key: string, value: int64) rows with event times.
row_batch timed(std::initializer_list<std::tuple<std::string, int64_t, int64_t>>
                  rows) {
  row_batch b{default_schema::keyed_numbers()};
  for (auto& [k, v, t] : rows) {
    b.columns[0].push_str(k);
    b.columns[1].push_int(v);
    ++b.rows;
    b.push_time(t);
  }
  return b;
}

} // namespace

TEST_CASE("the valve: the least watermark of the active channels, never "
          "back, the end once every channel ended") {
  watermark_valve v{3};
  CHECK_FALSE(v.on_mark(0, {5, false}).advanced);
  CHECK_FALSE(v.on_mark(1, {9, false}).advanced);
  CHECK(v.on_mark(2, {7, false}).advanced == 5);
  CHECK(v.on_mark(0, {8, false}).advanced == 7);
  CHECK_FALSE(v.on_mark(0, {6, false}).advanced); // a channel's goes not back
  auto idle = v.on_mark(2, {0, true});
  CHECK(idle.advanced == 8);
  CHECK_FALSE(idle.idle);
  CHECK(v.on_mark(0, {0, true}).advanced == 9);
  auto all = v.on_mark(1, {0, true});
  CHECK(all.idle == true);
  CHECK(v.idle());
  // Back below the valve's watermark: active, but it holds nothing back.
  auto back = v.on_mark(2, {3, false});
  CHECK(back.idle == false);
  CHECK_FALSE(back.advanced);
  CHECK(v.on_mark(2, {11, false}).advanced == 11);
  CHECK(v.current() == 11);
  CHECK_FALSE(v.on_end(2).advanced); // 0 and 1 are idle
  CHECK(v.idle());
  CHECK_FALSE(v.on_end(0).advanced);
  CHECK(v.on_end(1).advanced == end_watermark);
  CHECK_FALSE(v.idle());
}

TEST_CASE("window assignment: tumbling with offsets, sliding, negative "
          "times and the ends of int64") {
  ops::window_spec tumbling{ops::window_spec::kind::tumbling, 10, 10, 0};
  CHECK(starts(tumbling, 0) == std::vector<int64_t>{0});
  CHECK(starts(tumbling, 19) == std::vector<int64_t>{10});
  CHECK(starts(tumbling, -1) == std::vector<int64_t>{-10});
  tumbling.offset_ms = 3;
  CHECK(starts(tumbling, 2) == std::vector<int64_t>{-7});
  CHECK(starts(tumbling, 13) == std::vector<int64_t>{13});
  ops::window_spec sliding{ops::window_spec::kind::sliding, 10, 4, 0};
  CHECK(starts(sliding, 9) == std::vector<int64_t>{8, 4, 0});
  CHECK(starts(sliding, 12) == std::vector<int64_t>{12, 8, 4});
  auto low = starts(tumbling, INT64_MIN); // offset 3: starts at -9
  CHECK(low.empty()); // its window would start below int64: none
  CHECK(starts(ops::window_spec{ops::window_spec::kind::tumbling, 10, 10, 0},
               INT64_MAX)
        == std::vector<int64_t>{INT64_MAX - INT64_MAX % 10});
}

TEST_CASE("window parameters: one line naming the parameter") {
  auto problem = [](ops::params p) { return ops::parse_window_spec(p).problem; };
  CHECK(problem({{"type", "tumbling"}}) == "parameter 'size': missing");
  CHECK(problem({{"type", "tumbling"}, {"size", "0 s"}})
        == "parameter 'size': 0 ms is below 1 ms");
  CHECK(problem({{"type", "sliding"}, {"size", "1 min"}})
        == "parameter 'slide': missing (how far apart sliding windows start)");
  CHECK(problem({{"type", "sliding"}, {"size", "1 h"}, {"slide", "1 s"}})
        == "parameter 'slide': size / slide puts a row in 3600 windows; at "
           "most 1000");
  CHECK(problem({{"type", "tumbling"}, {"size", "1 min"}, {"slide", "1 s"}})
        == "parameter 'slide': only sliding windows have one");
  CHECK(problem({{"type", "tumbling"}, {"size", "10 s"}, {"offset", "10 s"}})
        == "parameter 'offset': 10000 ms is not below the size of 10000 ms");
  CHECK(problem({{"type", "tumbling"}, {"size", "later"}})
        == "parameter 'size': 'later' is not a duration (e.g. \"1 min\", "
           "\"500 ms\")");
}

TEST_CASE("a window fires when the watermark passes its end, once, and "
          "drops rows late for every window") {
  window_fixture w{{{"type", "tumbling"}, {"size", "10 ms"},
                    {"aggregate", "sum"}, {"field", "value"}}};
  CHECK(w.output.fields.size() == 4);
  w.process(timed({{"a", 1, 1}, {"b", 2, 3}, {"a", 4, 12}, {"a", 8, 9}}));
  CHECK(w.watermark(8).empty());
  CHECK(w.watermark(9) == std::vector<std::string>{"a [0,10) 9 @9",
                                                   "b [0,10) 2 @9"});
  CHECK(w.watermark(9).empty()); // fired once
  w.process(timed({{"a", 16, 5}, {"b", 32, 15}})); // the first is late
  CHECK(w.counters["numLateRecordsDropped"] == 1);
  CHECK(w.watermark(100) == std::vector<std::string>{"a [10,20) 4 @19",
                                                     "b [10,20) 32 @19"});
  // The watermark is operator state: after a restore, late stays late.
  auto saved = w.op->snapshot_state();
  window_fixture again{{{"type", "tumbling"}, {"size", "10 ms"},
                        {"aggregate", "sum"}, {"field", "value"}}};
  again.op->restore_state(saved);
  again.process(timed({{"a", 1, 50}, {"a", 1, 150}}));
  CHECK(again.counters["numLateRecordsDropped"] == 1);
  row_batch rest{again.output};
  again.op->finish(rest); // the end of input fires what is left
  CHECK(fired(rest) == std::vector<std::string>{"a [150,160) 1 @159"});
}

TEST_CASE("sliding windows count a row in each of its windows") {
  window_fixture w{{{"type", "sliding"}, {"size", "10 ms"}, {"slide", "5 ms"}}};
  w.process(timed({{"a", 0, 7}, {"a", 0, 12}}));
  CHECK(w.watermark(100)
        == std::vector<std::string>{"a [0,10) 1 @9", "a [5,15) 2 @14",
                                    "a [10,20) 1 @19"});
}

TEST_CASE("allowed lateness: a fired window takes late rows a while longer, "
          "firing again each time, then goes") {
  window_fixture w{{{"type", "tumbling"}, {"size", "10 ms"},
                    {"allowed-lateness", "5 ms"}}};
  w.process(timed({{"a", 0, 1}}));
  CHECK(w.watermark(9) == std::vector<std::string>{"a [0,10) 1 @9"});
  row_batch again{w.output};
  auto late = timed({{"a", 0, 2}});
  w.op->process(late, again, false); // 2 is late, but within 5 ms
  CHECK(fired(again) == std::vector<std::string>{"a [0,10) 2 @9"});
  CHECK(w.watermark(13).empty()); // no second firing by the watermark
  CHECK(w.watermark(14).empty()); // its state goes now
  w.process(timed({{"a", 0, 3}}));
  CHECK(w.counters["numLateRecordsDropped"] == 1);
  row_batch rest{w.output};
  w.op->finish(rest);
  CHECK(rest.rows == 0); // nothing of [0,10) left to fire
}

TEST_CASE("session windows: a key's rows closer than the gap are one "
          "session, merged as rows bridge sessions") {
  window_fixture w{{{"type", "session"}, {"gap", "10 ms"},
                    {"aggregate", "sum"}, {"field", "value"}}};
  w.process(timed({{"a", 1, 0}, {"a", 2, 5}, {"b", 4, 5}, {"a", 8, 30}}));
  // a: [0, 15) and [30, 40); b: [5, 15).
  CHECK(w.watermark(14) == std::vector<std::string>{"a [0,15) 3 @14",
                                                    "b [5,15) 4 @14"});
  // [45, 55) is a session of its own; 22 opens [22, 32), which merges
  // with [30, 40).
  w.process(timed({{"a", 16, 45}, {"a", 32, 22}}));
  CHECK(w.counters["numLateRecordsDropped"] == 0);
  CHECK(w.watermark(54) == std::vector<std::string>{"a [22,40) 40 @39",
                                                    "a [45,55) 16 @54"});
  w.process(timed({{"a", 64, 3}})); // its session [3, 13) is gone
  CHECK(w.counters["numLateRecordsDropped"] == 1);
  row_batch rest{w.output};
  w.op->finish(rest);
  CHECK(rest.rows == 0);
}

TEST_CASE("session window parameters") {
  auto problem = [](ops::params p) { return ops::parse_window_spec(p).problem; };
  CHECK(problem({{"type", "session"}})
        == "parameter 'gap': missing (how far apart a key's rows may be in "
           "one session)");
  CHECK(problem({{"type", "session"}, {"gap", "1 s"}, {"size", "1 s"}})
        == "parameter 'size': session windows have none (their length is "
           "their rows' and the gap)");
  CHECK(problem({{"type", "tumbling"}, {"size", "1 s"}, {"gap", "1 s"}})
        == "parameter 'gap': only session windows have one");
}

TEST_CASE("session windows survive a snapshot and restore of their keyed "
          "state, starts and all") {
  ops::params p{{"type", "session"}, {"gap", "10 ms"}};
  state::heap_backend before;
  window_fixture w{p, &before};
  w.process(timed({{"a", 0, 0}, {"a", 0, 5}, {"b", 0, 40}}));
  auto snap = before.snapshot(1, state::snapshot_kind::savepoint);
  auto bytes = snap.finish ? snap.finish() : snap.bytes;
  auto watermark = w.op->snapshot_state();

  state::heap_backend after;
  after.restore(bytes);
  window_fixture again{p, &after};
  again.op->restore_state(watermark);
  again.process(timed({{"a", 0, 12}})); // joins [0, 15)
  CHECK(again.watermark(100)
        == std::vector<std::string>{"a [0,22) 3 @21", "b [40,50) 1 @49"});
}

namespace {

/// Counts the distinct values of a window (its accumulator: the values
/// seen, one per line, sorted), as a user library would write it.
ops::window_aggregate_function distinct_values() {
  ops::window_aggregate_function f;
  f.create = [] { return std::string{}; };
  f.add = [](std::string& acc, const record& r) {
    std::set<std::string> seen;
    std::istringstream in{acc};
    for (std::string line; std::getline(in, line);)
      seen.insert(line);
    seen.insert(std::to_string(r.num));
    acc.clear();
    for (auto& v : seen)
      acc += v + "\n";
  };
  f.merge = [add = f.add](std::string& acc, const std::string& other) {
    std::istringstream in{other};
    for (std::string line; std::getline(in, line);)
      add(acc, record::integer("", std::stoll(line)));
  };
  f.result = [](const std::string& acc) {
    return record::integer("", std::count(acc.begin(), acc.end(), '\n'));
  };
  f.value_type = field_type::int64;
  return f;
}

/// A window operator of `f` on (key, value) rows keyed by "key", opened on
/// `backend`.
struct function_window {
  ops::operator_factory f;
  std::unique_ptr<ops::transform> op;
  schema input = default_schema::keyed_numbers();
  schema output;
  ops::operator_context ctx;

  function_window(ops::window_aggregate_function fn, ops::params p,
                  state::keyed_backend* backend)
    : f(ops::window_function_operator("distinct", std::move(fn))) {
    auto derived = f.output_schema(p, ops::schema_query{&input, {"key"}});
    REQUIRE(derived.problem.empty());
    output = derived.value;
    op = f.make_transform(p);
    ctx.input = &input;
    ctx.output = &output;
    ctx.key = {0};
    ctx.keyed_state = backend;
    op->open(ctx);
  }

  std::vector<std::string> watermark(int64_t wm) {
    row_batch out{output};
    op->on_watermark(wm, out);
    return fired(out);
  }
};

} // namespace

TEST_CASE("a user's window function aggregates each window incrementally, "
          "merges sessions and survives a restore") {
  state::heap_backend before;
  function_window w{distinct_values(),
                    {{"type", "tumbling"}, {"size", "10 ms"}}, &before};
  CHECK(to_string(w.output) == "(key: string, window_start: timestamp, "
                               "window_end: timestamp, value: int64)");
  row_batch out{w.output};
  auto rows = timed({{"a", 1, 1}, {"a", 1, 2}, {"a", 2, 3}, {"b", 7, 4},
                     {"a", 5, 12}});
  w.op->process(rows, out, false);
  CHECK(out.rows == 0);
  // Its accumulators are keyed state: a restored operator goes on.
  auto snap = before.snapshot(1, state::snapshot_kind::savepoint);
  state::heap_backend after;
  after.restore(snap.finish ? snap.finish() : snap.bytes);
  function_window again{distinct_values(),
                        {{"type", "tumbling"}, {"size", "10 ms"}}, &after};
  auto more = timed({{"a", 3, 5}});
  again.op->process(more, out, false);
  CHECK(again.watermark(9) == std::vector<std::string>{"a [0,10) 3 @9",
                                                       "b [0,10) 1 @9"});
  CHECK(again.watermark(19) == std::vector<std::string>{"a [10,20) 1 @19"});

  // Session windows merge accumulators; a reduce keeps the larger value.
  state::heap_backend s;
  function_window sessions{distinct_values(),
                           {{"type", "session"}, {"gap", "5 ms"}}, &s};
  auto one = timed({{"a", 1, 0}, {"a", 2, 8}, {"a", 1, 4}}); // 4 joins both
  sessions.op->process(one, out, false);
  CHECK(sessions.watermark(100) == std::vector<std::string>{"a [0,13) 2 @12"});
  state::heap_backend r;
  function_window larger{ops::reduce_function([](record&& x, record&& y) {
                           return x.num >= y.num ? x : y;
                         }),
                         {{"type", "tumbling"}, {"size", "10 ms"}}, &r};
  auto values = timed({{"a", 4, 1}, {"a", 9, 2}, {"a", 2, 3}});
  larger.op->process(values, out, false);
  CHECK(larger.watermark(9) == std::vector<std::string>{"a [0,10) 9 @9"});
}

TEST_CASE("a window function's parameters: the window's, and sessions need "
          "a merge") {
  auto f = distinct_values();
  f.merge = nullptr;
  auto op = ops::window_function_operator("distinct", f);
  CHECK(op.validate({{"type", "session"}, {"gap", "1 s"}}, ops::role::transform)
        == "parameter 'type': session windows merge, and this window "
           "function has no merge");
  CHECK(op.validate({{"type", "tumbling"}, {"size", "1 s"}, {"aggregate", "sum"}},
                    ops::role::transform)
        == "parameter 'aggregate': unknown parameter of operator 'distinct' "
           "(known: allowed-lateness, gap, offset, size, slide, time, type)");
}
