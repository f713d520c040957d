// The interval join (operators/builtin/interval_join.hpp) as a plain
// object: matches within the bounds from either side, late rows dropped
// and counted, and each row's state removed once the watermark passed its
// last chance (docs/event-time.md § Interval join).
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "messages/row_batch.hpp"
#include "operators/builtin/interval_join.hpp"
#include "operators/keyed_timers.hpp"
#include "operators/registry.hpp"
#include "storage/state/heap_backend.hpp"
#include "storage/state/rocksdb_backend.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace weir;
using ops::time_domain;

namespace {

/// clicks (user: string, t: int64) joined with orders (customer: string,
/// amount: int64), keyed by user and customer, on a backend of `type`.
struct join_fixture {
  test::temp_dir dir;
  std::unique_ptr<state::keyed_backend> backend;
  std::unique_ptr<ops::keyed_timers> timers;
  schema clicks{{{"user", field_type::string, false},
                 {"t", field_type::int64, false}}};
  schema orders{{{"customer", field_type::string, false},
                 {"amount", field_type::int64, false}}};
  schema output;
  std::map<std::string, int64_t> counters;
  ops::operator_context ctx;
  std::unique_ptr<ops::transform> op;

  join_fixture(const std::string& type, std::string lower, std::string upper) {
    if (type == "hashmap") {
      backend = std::make_unique<state::heap_backend>();
    } else {
      state::rocksdb_backend_options o;
      o.local_dir = dir.sub("local");
      o.checkpoint_dir = dir.sub("checkpoints");
      o.owner = "join-0";
      backend = std::make_unique<state::rocksdb_backend>(o);
    }
    timers = std::make_unique<ops::keyed_timers>(*backend);
    ops::params p{{"left", "clicks"}, {"right", "orders"},
                  {"lower", lower}, {"upper", upper}};
    auto& f = *ops::registry::builtin().find("interval_join");
    ops::schema_query q;
    q.inputs = {{"orders", &orders, {"customer"}}, {"clicks", &clicks, {"user"}}};
    auto derived = f.output_schema(p, q);
    REQUIRE(derived.problem.empty());
    output = derived.value;
    op = f.make_transform(p);
    ctx.inputs = {{"orders", &orders, {0}}, {"clicks", &clicks, {0}}};
    ctx.input = &orders;
    ctx.output = &output;
    ctx.counters = &counters;
    ctx.keyed_state = backend.get();
    ctx.timers = timers.get();
    op->open(ctx);
  }

  /// Rows of input 1 (clicks): (user, time).
  std::vector<std::string> click(const std::string& user, int64_t t) {
    row_batch b{clicks};
    b.columns[0].push_str(user);
    b.columns[1].push_int(t);
    ++b.rows;
    b.push_time(t);
    return run(1, b);
  }

  /// Rows of input 0 (orders): (customer, amount) at time t.
  std::vector<std::string> order(const std::string& customer, int64_t amount,
                                 int64_t t) {
    row_batch b{orders};
    b.columns[0].push_str(customer);
    b.columns[1].push_int(amount);
    ++b.rows;
    b.push_time(t);
    return run(0, b);
  }

  /// The watermark reaches `wm`: due timers fire as the chain fires them.
  void watermark(int64_t wm) {
    timers->advance_watermark(wm);
    row_batch out{output};
    while (auto t = timers->pop_due(time_domain::event_time, wm))
      op->on_timer(*t, time_domain::event_time, out);
    CHECK(out.rows == 0);
  }

  std::vector<std::string> run(size_t input, row_batch& in) {
    row_batch out{output};
    op->process_input(input, in, out);
    std::vector<std::string> lines;
    for (size_t r = 0; r < out.rows; ++r)
      lines.push_back(std::string{out.columns[0].str(r)} + " "
                      + std::to_string(out.columns[1].ints[r]) + " "
                      + std::to_string(out.columns[2].ints[r]) + " @"
                      + std::to_string(out.time(r)));
    return lines;
  }

  /// Entries left in both buffers.
  int64_t buffered() {
    int64_t n = 0;
    for (auto name : {"join-left", "join-right"})
      backend->column(name, state::state_type::map)
        .scan({}, [&](std::string_view, std::string_view) { ++n; });
    return n;
  }
};

} // namespace

TEST_CASE("interval join: a row joins the other input's rows of its key "
          "within [t + lower, t + upper], whichever comes first") {
  for (auto type : {"hashmap", "rocksdb"}) {
    CAPTURE(type);
    join_fixture j{type, "-5 ms", "10 ms"};
    CHECK(to_string(j.output)
          == "(user: string, t: int64, amount: int64)");
    CHECK(j.order("u1", 7, 100).empty());
    CHECK(j.order("u1", 8, 111).empty());
    CHECK(j.order("u2", 9, 100).empty());
    // A click at 101 takes orders in [96, 111]: both of u1's, not u2's.
    CHECK(j.click("u1", 101) == std::vector<std::string>{"u1 101 7 @101",
                                                         "u1 101 8 @111"});
    // An order at 95 takes clicks in [85, 100]: none yet at 101.
    CHECK(j.order("u1", 3, 95).empty());
    // An order at 106 takes clicks in [96, 111].
    CHECK(j.order("u1", 4, 106) == std::vector<std::string>{"u1 101 4 @106"});
  }
}

TEST_CASE("interval join: late rows are dropped and counted, and the "
          "watermark removes rows that can match no more") {
  for (auto type : {"hashmap", "rocksdb"}) {
    CAPTURE(type);
    join_fixture j{type, "-5 ms", "10 ms"};
    j.click("u1", 100);
    j.order("u1", 1, 103);
    CHECK(j.buffered() == 2);
    // The order at 103 can match clicks up to 108; the click at 100,
    // orders up to 110.
    j.watermark(107);
    CHECK(j.buffered() == 2);
    j.watermark(108);
    CHECK(j.buffered() == 1);
    j.watermark(110);
    CHECK(j.buffered() == 0);
    // At or below the watermark: late, whatever it would have joined.
    CHECK(j.order("u1", 2, 110).empty());
    CHECK(j.counters["numLateRecordsDropped"] == 1);
    CHECK(j.buffered() == 0);
  }
}

TEST_CASE("interval join parameters and inputs: one line naming what does "
          "not fit") {
  auto bounds = [](ops::params p) { return ops::parse_join_bounds(p).problem; };
  CHECK(bounds({{"lower", "1 s"}}) == "parameter 'upper': missing");
  CHECK(bounds({{"lower", "5 s"}, {"upper", "-5 s"}})
        == "parameters 'lower' and 'upper': 5000 ms is above -5000 ms");
  CHECK(bounds({{"lower", "soon"}, {"upper", "1 s"}})
        == "parameter 'lower': 'soon' is not a duration (e.g. \"-5 s\", "
           "\"10 s\", \"500 ms\")");
  CHECK(ops::parse_join_bounds({{"lower", "-2 min"}, {"upper", "0"}})
          .bounds.lower_ms
        == -120000);

  auto& f = *ops::registry::builtin().find("interval_join");
  schema a{{{"user", field_type::string, false}, {"x", field_type::int64, false}}};
  schema b{{{"id", field_type::int64, false}, {"x", field_type::int64, false}}};
  schema c{{{"user", field_type::string, false}, {"y", field_type::int64, false}}};
  ops::params p{{"left", "a"}, {"right", "b"}, {"lower", "0"}, {"upper", "1 s"}};
  auto problem = [&](std::vector<ops::schema_query::side> sides,
                     ops::params params) {
    ops::schema_query q;
    q.inputs = std::move(sides);
    return f.output_schema(params, q).problem;
  };
  CHECK(problem({{"a", &a, {"user"}}}, p)
        == "interval_join takes two inputs (edges into it); it has 1");
  CHECK(problem({{"a", &a, {"user"}}, {"c", &c, {"user"}}}, p)
        == "parameter 'right': 'b' is not an input of this vertex (its "
           "inputs: a, c)");
  CHECK(problem({{"a", &a, {"user"}}, {"b", &b, {"id"}}}, p)
        == "the keys differ: 'a' is keyed by (user: string), 'b' by (id: "
           "int64) (the same types, nullable or not, in the same order)");
  CHECK(problem({{"a", &a, {}}, {"b", &b, {"id"}}}, p)
        == "the edge from 'a' is not keyed: both inputs of an interval join "
           "are \"hash\" partitioned by the join key");
  auto clash = p;
  clash["right"] = "c";
  CHECK(problem({{"a", &a, {"user"}}, {"c", &a, {"user"}}}, clash)
        == "field 'x' is in both inputs; rename one with a map before the "
           "join");
  CHECK(problem({{"a", &a, {"user"}}, {"c", &c, {"user"}}}, clash).empty());
}
