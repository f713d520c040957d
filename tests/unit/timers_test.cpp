// Timers of keyed operators (operators/keyed_timers.hpp) on both state
// backends: order, one timer per key and time, deletion, checkpoint and
// restore; and processing-time windows driven by them, on a scripted clock
// (docs/event-time.md § Timers).
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "operators/builtin/windows.hpp"
#include "operators/keyed_timers.hpp"
#include "operators/registry.hpp"
#include "storage/state/heap_backend.hpp"
#include "storage/state/rocksdb_backend.hpp"
#include "tests/unit/temp_dir.hpp"
#include "../rows.hpp"
#include "window_fixture.hpp"

using namespace weir;
using ops::time_domain;

namespace {

/// Backends of one type; RocksDB ones in their own directories.
struct backends {
  std::string type;
  test::temp_dir dir;
  int made = 0;

  std::unique_ptr<state::keyed_backend> make() {
    if (type == "hashmap")
      return std::make_unique<state::heap_backend>();
    state::rocksdb_backend_options o;
    o.local_dir = dir.sub("local-" + std::to_string(made++));
    o.checkpoint_dir = dir.sub("checkpoints");
    o.owner = "timers-0";
    return std::make_unique<state::rocksdb_backend>(o);
  }
};

std::string take(state::keyed_backend& b, int64_t id) {
  auto s = b.snapshot(id, state::snapshot_kind::savepoint);
  return s.finish ? s.finish() : s.bytes;
}

/// Pops every timer of `d` due at `t` as "key@time".
std::vector<std::string> due(ops::keyed_timers& timers,
                             state::keyed_backend& b, time_domain d,
                             int64_t t) {
  std::vector<std::string> out;
  while (auto time = timers.pop_due(d, t))
    out.push_back(std::string{b.current_key()} + "@" + std::to_string(*time));
  return out;
}

} // namespace

TEST_CASE("timers fire in time order with their key current, one per key "
          "and time, deleted ones not at all") {
  for (auto type : {"hashmap", "rocksdb"}) {
    CAPTURE(type);
    backends make{type};
    auto b = make.make();
    ops::keyed_timers timers{*b};
    CHECK_FALSE(timers.earliest(time_domain::event_time));
    b->set_current_key("a");
    timers.register_event_time_timer(30);
    timers.register_event_time_timer(10);
    timers.register_event_time_timer(10); // the same timer
    timers.register_event_time_timer(-5);  // before 1970 sorts first
    b->set_current_key("b");
    timers.register_event_time_timer(10);
    timers.register_event_time_timer(20);
    timers.delete_event_time_timer(20);
    timers.delete_event_time_timer(99); // none: nothing happens
    b->set_current_key("c");
    timers.register_processing_time_timer(15);
    CHECK(timers.earliest(time_domain::event_time) == -5);
    CHECK(timers.earliest(time_domain::processing_time) == 15);
    CHECK(due(timers, *b, time_domain::event_time, 9)
          == std::vector<std::string>{"a@-5"});
    CHECK(due(timers, *b, time_domain::event_time, 25)
          == std::vector<std::string>{"a@10", "b@10"});
    // The domains are apart: the processing timer waits for the clock.
    CHECK(due(timers, *b, time_domain::processing_time, 14).empty());
    CHECK(due(timers, *b, time_domain::processing_time, 15)
          == std::vector<std::string>{"c@15"});
    CHECK(timers.earliest(time_domain::event_time) == 30);
  }
}

TEST_CASE("timers are keyed state: a snapshot restores them on either "
          "backend, and operators without timers keep no timer state") {
  for (auto from : {"hashmap", "rocksdb"})
    for (auto to : {"hashmap", "rocksdb"}) {
      CAPTURE(from);
      CAPTURE(to);
      backends make_from{from};
      backends make_to{to};
      auto before = make_from.make();
      {
        ops::keyed_timers timers{*before};
        before->set_current_key("k1");
        timers.register_event_time_timer(100);
        timers.register_processing_time_timer(7);
        before->set_current_key("k2");
        timers.register_event_time_timer(50);
      }
      auto bytes = take(*before, 1);
      auto after = make_to.make();
      after->restore(bytes);
      ops::keyed_timers timers{*after};
      timers.claim_restored();
      CHECK(after->unclaimed().empty());
      CHECK(due(timers, *after, time_domain::event_time, 1000)
            == std::vector<std::string>{"k2@50", "k1@100"});
      CHECK(due(timers, *after, time_domain::processing_time, 1000)
            == std::vector<std::string>{"k1@7"});
      // A backend whose operator never used timers has none to restore.
      auto plain = make_from.make();
      ops::keyed_timers unused{*plain};
      CHECK_FALSE(unused.earliest(time_domain::event_time));
      auto none = make_to.make();
      none->restore(take(*plain, 2));
      CHECK(none->unclaimed().empty());
    }
}

TEST_CASE("the end of the input fires each timer there is once, not those "
          "registered meanwhile") {
  state::heap_backend b;
  ops::keyed_timers timers{b};
  b.set_current_key("x");
  timers.register_processing_time_timer(5);
  timers.register_event_time_timer(9);
  auto all = timers.all(time_domain::event_time);
  REQUIRE(all.size() == 1);
  CHECK(all[0] == std::pair<int64_t, std::string>{9, "x"});
  CHECK(timers.take(time_domain::event_time, 9, "x"));
  CHECK_FALSE(timers.take(time_domain::event_time, 9, "x")); // gone now
  timers.clear(time_domain::processing_time);
  CHECK_FALSE(timers.earliest(time_domain::processing_time));
}

namespace {

/// A processing-time window operator on (key, value) rows whose clock the
/// test sets.
struct clocked_window {
  int64_t now = 0;
  state::heap_backend backend;
  ops::keyed_timers timers{backend, [this] { return now; }};
  test::window_fixture w;

  explicit clocked_window(ops::params p) : w(std::move(p), &backend, &timers) {}

  void process(std::initializer_list<std::string> keys) {
    std::vector<record> rows;
    for (auto& k : keys)
      rows.push_back(record::integer(k, 0, -1)); // event time is ignored
    w.process(test::to_rows(w.input, rows));
  }

  /// The clock moves to `t`: the due timers fire, as the runtime fires them.
  std::vector<std::string> tick(int64_t t) {
    now = t;
    row_batch out{w.output};
    while (auto time = timers.pop_due(time_domain::processing_time, t))
      w.op->on_timer(*time, time_domain::processing_time, out);
    return test::fired(out);
  }
};

} // namespace

TEST_CASE("processing-time windows: rows fall into the window of the clock "
          "when they arrive, which fires when the clock passes its end") {
  clocked_window w{{{"type", "tumbling"}, {"size", "10 ms"},
                    {"time", "processing"}}};
  w.now = 3;
  w.process({"a", "b", "a"});
  w.now = 12;
  w.process({"a"});
  CHECK(w.timers.earliest(time_domain::processing_time) == 9);
  CHECK(w.tick(8).empty());
  CHECK(w.tick(10)
        == std::vector<std::string>{"a [0,10) 2 @9", "b [0,10) 1 @9"});
  // Event-time watermarks do not move processing-time windows.
  CHECK(w.w.watermark(1000).empty());
  CHECK(w.tick(25) == std::vector<std::string>{"a [10,20) 1 @19"});

  clocked_window s{{{"type", "session"}, {"gap", "5 ms"},
                    {"time", "processing"}}};
  s.now = 0;
  s.process({"a"});
  s.now = 3;
  s.process({"a"}); // within the gap: the session grows to [0, 8)
  CHECK(s.tick(5).empty());
  CHECK(s.tick(8) == std::vector<std::string>{"a [0,8) 2 @7"});
}

TEST_CASE("processing-time window parameters") {
  auto problem = [](ops::params p) { return ops::parse_window_spec(p).problem; };
  CHECK(problem({{"type", "tumbling"}, {"size", "1 s"}, {"time", "processing"},
                 {"allowed-lateness", "1 s"}})
        == "parameter 'allowed-lateness': processing-time windows have no "
           "late rows (the clock puts each row in an open window)");
  CHECK(problem({{"type", "tumbling"}, {"size", "1 s"}, {"time", "ingest"}})
        == "parameter 'time': unknown time 'ingest' (known: event, "
           "processing)");
  CHECK(problem({{"type", "tumbling"}, {"size", "1 s"}, {"time", "processing"}})
          .empty());
}
