#include <doctest/doctest.h>

#include <fmt/format.h>

#include "actors/job_master/checkpoint_coordinator.hpp"
#include "actors/job_master/restart_strategy.hpp"
#include "actors/job_master/savepoint_mapping.hpp"
#include "actors/common/event_log.hpp"
#include "actors/common/heartbeat_monitor.hpp"
#include "actors/supervisor/restart_intensity.hpp"
#include "config/config.hpp"
#include "messages/errors.hpp"
#include "messages/key_groups.hpp"
#include "operators/registry.hpp"
#include "plan/savepoint_fit.hpp"
#include "storage/state/rescale.hpp"
#include "storage/state/snapshot_format.hpp"

using namespace weir;
using namespace std::chrono_literals;
using kind = restart_strategy_config::kind;

namespace {

restart_strategy_config with(kind k) {
  restart_strategy_config c;
  c.type = k;
  return c;
}

const auto t0 = std::chrono::steady_clock::time_point{} + 1h;

} // namespace

TEST_CASE("none never restarts") {
  restart_strategy s{with(kind::none)};
  CHECK_FALSE(s.on_failure(t0));
  CHECK(s.reason() == "restart strategy none: a failure ends the job");
}

TEST_CASE("fixed-delay restarts `attempts` times after `delay`") {
  auto c = with(kind::fixed_delay);
  c.attempts = 2;
  c.delay = 250ms;
  restart_strategy s{c};
  CHECK(s.on_failure(t0) == 250ms);
  CHECK(s.on_failure(t0 + 1s) == 250ms);
  CHECK_FALSE(s.on_failure(t0 + 2s));
  CHECK(s.reason() == "restart strategy fixed-delay: 2 restart attempts used up");
  CHECK(s.restarts() == 2);
}

TEST_CASE("failure-rate tolerates N failures per interval") {
  auto c = with(kind::failure_rate);
  c.max_failures_per_interval = 2;
  c.failure_rate_interval = 10s;
  c.failure_rate_delay = 100ms;
  restart_strategy s{c};
  CHECK(s.on_failure(t0) == 100ms);
  CHECK(s.on_failure(t0 + 1s) == 100ms);
  CHECK_FALSE(s.on_failure(t0 + 2s));
  CHECK(s.reason() == "restart strategy failure-rate: more than 2 failures "
                      "within 10000 ms");
  restart_strategy later{c};
  CHECK(later.on_failure(t0));
  CHECK(later.on_failure(t0 + 6s));
  CHECK(later.on_failure(t0 + 12s)); // the first one left the window
}

TEST_CASE("exponential-delay grows, caps, and resets after a quiet period") {
  auto c = with(kind::exponential_delay);
  c.initial_backoff = 100ms;
  c.multiplier = 2.0;
  c.max_backoff = 500ms;
  c.jitter = 0.0;
  c.reset_threshold = 1min;
  restart_strategy s{c};
  CHECK(s.on_failure(t0) == 100ms);
  CHECK(s.on_failure(t0 + 1s) == 200ms);
  CHECK(s.on_failure(t0 + 2s) == 400ms);
  CHECK(s.on_failure(t0 + 3s) == 500ms);
  CHECK(s.on_failure(t0 + 4s) == 500ms);
  CHECK(s.on_failure(t0 + 10min) == 100ms);
}

TEST_CASE("exponential-delay jitter stays within the factor") {
  auto c = with(kind::exponential_delay);
  c.initial_backoff = 1000ms;
  c.jitter = 0.1;
  restart_strategy s{c, 7};
  auto d = s.on_failure(t0);
  REQUIRE(d);
  CHECK(d->count() >= 900);
  CHECK(d->count() <= 1100);
}

TEST_CASE("the restart-strategy keys configure the strategy") {
  auto cfg = configuration::load(std::nullopt,
                                 {"restart-strategy.type=fixed-delay",
                                  "restart-strategy.fixed-delay.attempts=3",
                                  "restart-strategy.fixed-delay.delay=2 s"});
  REQUIRE(cfg);
  auto c = restart_strategy_config::from(*cfg);
  CHECK(c.type == kind::fixed_delay);
  CHECK(c.attempts == 3);
  CHECK(c.delay == 2s);
  CHECK(restart_strategy_config::from(configuration{}).type
        == kind::exponential_delay);
  auto bad = configuration::load(std::nullopt, {"restart-strategy.type=sometimes"});
  CHECK_FALSE(bad);
}

TEST_CASE("by default a job restarts with growing pauses, 5 times, then fails") {
  restart_strategy s{restart_strategy_config::from(configuration{})};
  std::vector<std::chrono::milliseconds> pauses;
  auto now = t0;
  while (auto pause = s.on_failure(now)) {
    pauses.push_back(*pause);
    now += *pause + 1s;
  }
  REQUIRE(pauses.size() == 5);
  for (size_t i = 0; i < pauses.size(); ++i) { // 1 s, 2 s, 4 s ... +-10 %
    auto nominal = 1000.0 * static_cast<double>(1 << i);
    CHECK(static_cast<double>(pauses[i].count()) >= nominal * 0.9);
    CHECK(static_cast<double>(pauses[i].count()) <= nominal * 1.1);
  }
  CHECK(s.reason() == "restart strategy exponential-delay: 5 restart attempts "
                      "used up");
  // An hour without failures starts the count over.
  CHECK(s.on_failure(now + 1h).has_value());
}

TEST_CASE("supervision allows N restarts within T, then gives up") {
  restart_intensity r{3, 10s};
  CHECK(r.on_crash(t0));
  CHECK(r.on_crash(t0 + 1s));
  CHECK(r.on_crash(t0 + 2s));
  CHECK_FALSE(r.on_crash(t0 + 3s)); // a 4th crash within 10 s
  CHECK(r.describe() == "3 restarts within 10000 ms");
}

TEST_CASE("supervision forgets restarts older than the window") {
  restart_intensity r{2, 10s};
  CHECK(r.on_crash(t0));
  CHECK(r.on_crash(t0 + 5s));
  CHECK(r.on_crash(t0 + 10s)); // the first fell out of the window
  CHECK(r.recent() == 2);
  CHECK_FALSE(r.on_crash(t0 + 14s));
  CHECK(r.on_crash(t0 + 30s));
}

TEST_CASE("supervision with zero restarts gives up at the first crash") {
  restart_intensity r{0, 10s};
  CHECK_FALSE(r.on_crash(t0));
}

TEST_CASE("a peer silent for longer than heartbeat.timeout is lost") {
  basic_heartbeat_monitor<std::string> hb{heartbeat_options{200ms, 1000ms, 2}};
  hb.watch("te-1", t0);
  hb.watch("te-2", t0);
  hb.heard_from("te-2", t0 + 900ms);
  CHECK(hb.expired(t0 + 1000ms).empty()); // exactly the timeout: not yet
  CHECK(hb.expired(t0 + 1001ms) == std::vector<std::string>{"te-1"});
  CHECK_FALSE(hb.watching("te-1"));
  CHECK(hb.expired(t0 + 1800ms).empty());
  CHECK(hb.expired(t0 + 1901ms) == std::vector<std::string>{"te-2"});
  CHECK(hb.peers().empty());
}

TEST_CASE("a round long after the last one is this process's own pause: "
          "nobody is lost then") {
  basic_heartbeat_monitor<std::string> hb{heartbeat_options{200ms, 1000ms, 2}};
  hb.watch("te-1", t0);
  CHECK(hb.expired(t0 + 200ms).empty());
  // SIGSTOPped for a minute: the next round comes late.
  CHECK(hb.expired(t0 + 60s).empty());
  CHECK(hb.watching("te-1"));
  // Its silence counts from the pause's end.
  CHECK(hb.expired(t0 + 60s + 1000ms).empty());
  CHECK(hb.expired(t0 + 60s + 1001ms) == std::vector<std::string>{"te-1"});
}

TEST_CASE("failed heartbeat requests in a row make a peer lost") {
  basic_heartbeat_monitor<std::string> hb{heartbeat_options{200ms, 1000ms, 2}};
  hb.watch("te-1", t0);
  CHECK_FALSE(hb.request_failed("te-1"));
  hb.heard_from("te-1", t0 + 200ms); // an answer resets the count
  CHECK_FALSE(hb.request_failed("te-1"));
  CHECK(hb.request_failed("te-1"));
  CHECK_FALSE(hb.watching("te-1"));
  CHECK_FALSE(hb.request_failed("te-1")); // reported once
}

TEST_CASE("unwatched peers are never reported") {
  basic_heartbeat_monitor<std::string> hb;
  hb.watch("jm", t0);
  hb.unwatch("jm");
  hb.heard_from("jm", t0);
  CHECK(hb.expired(t0 + 1h).empty());
}

namespace {

checkpoint_options every(std::chrono::milliseconds interval) {
  checkpoint_options o;
  o.interval = interval;
  o.timeout = 10s;
  return o;
}

} // namespace

TEST_CASE("a checkpoint completes when every subtask acknowledged it") {
  checkpoint_coordinator c{every(200ms), 2};
  auto id = c.trigger(t0);
  REQUIRE(id);
  CHECK(*id == 1);
  CHECK_FALSE(c.trigger(t0)); // max-concurrent-checkpoints 1
  CHECK_FALSE(c.acknowledge(*id, 0, {{"numbers", "abc"}}, t0 + 5ms));
  CHECK_FALSE(c.acknowledge(*id, 0, {{"numbers", "abc"}}, t0 + 6ms)); // again
  auto done = c.acknowledge(*id, 1, {{"numbers", "de"}, {"sums", "f"}},
                            t0 + 10ms);
  REQUIRE(done);
  CHECK(done->id == 1);
  CHECK(done->bytes == 6);
  CHECK(done->duration == 10ms);
  CHECK(done->states.at(1).at("sums") == "f");
  // Not what a restart resumes from until it is stored.
  CHECK(c.latest() == nullptr);
  c.confirm(*done);
  REQUIRE(c.latest() != nullptr);
  CHECK(c.latest()->id == 1);
  CHECK(c.trigger(t0 + 20ms) == 2);
}

TEST_CASE("a checkpoint that was never stored is not what a restart "
          "resumes from") {
  checkpoint_coordinator c{every(100ms), 1};
  auto a = c.trigger(t0);
  auto first = c.acknowledge(*a, 0, {{"v", "1"}}, t0);
  REQUIRE(first);
  c.confirm(*first);
  auto b = c.trigger(t0 + 1s);
  REQUIRE(c.acknowledge(*b, 0, {{"v", "2"}}, t0 + 1s)); // its store fails
  CHECK(c.latest()->id == *a);
  CHECK(c.completed().size() == 1);
  c.confirm(*first); // an older one is ignored
  CHECK(c.completed().size() == 1);
}

TEST_CASE("a rescaled coordinator waits for the new subtasks and never "
          "reuses an id") {
  checkpoint_coordinator c{every(200ms), 2};
  auto first = c.trigger(t0);
  CHECK_FALSE(c.acknowledge(*first, 0, {}, t0));
  REQUIRE(c.acknowledge(*first, 1, {}, t0));
  auto abandoned = c.trigger(t0 + 1s);
  REQUIRE(abandoned);
  completed_checkpoint mapped;
  mapped.id = *first;
  mapped.states[2]["counts"] = "split";
  c.rescale(3, mapped);
  REQUIRE(c.latest() != nullptr);
  CHECK(c.latest()->states.at(2).at("counts") == "split");
  CHECK(c.completed().size() == 1);
  CHECK(c.pending_count() == 0);
  auto next = c.trigger(t0 + 2s);
  REQUIRE(next);
  CHECK(*next == *abandoned + 1);
  CHECK_FALSE(c.acknowledge(*next, 0, {}, t0 + 2s));
  CHECK_FALSE(c.acknowledge(*next, 1, {}, t0 + 2s));
  CHECK(c.acknowledge(*next, 2, {}, t0 + 2s)); // three subtasks now
}

TEST_CASE("checkpoints time out, respect the min pause, and keep N") {
  auto o = every(100ms);
  o.min_pause = 50ms;
  o.retained = 2;
  o.max_concurrent = 2;
  checkpoint_coordinator c{o, 1};
  auto a = c.trigger(t0);
  auto b = c.trigger(t0 + 1s);
  REQUIRE(a);
  REQUIRE(b);
  CHECK(c.expire(t0 + 10500ms) == std::vector<int64_t>{*a});
  CHECK_FALSE(c.acknowledge(*a, 0, {}, t0 + 10600ms)); // expired
  REQUIRE(c.acknowledge(*b, 0, {}, t0 + 10600ms));
  CHECK_FALSE(c.trigger(t0 + 10620ms)); // within the min pause
  for (int i = 0; i < 3; ++i) {
    auto t = t0 + 11s + std::chrono::seconds(i);
    auto id = c.trigger(t);
    REQUIRE(id);
    auto done = c.acknowledge(*id, 0, {}, t);
    REQUIRE(done);
    c.confirm(*done);
  }
  CHECK(c.completed().size() == 2);
  CHECK(c.latest()->id == 5);
}

TEST_CASE("a failover abandons pending checkpoints and keeps completed ones") {
  checkpoint_coordinator c{every(100ms), 1};
  auto a = c.trigger(t0);
  auto done = c.acknowledge(*a, 0, {{"v", "x"}}, t0);
  REQUIRE(done);
  c.confirm(*done);
  auto b = c.trigger(t0 + 1s);
  c.abort_pending();
  CHECK(c.pending_count() == 0);
  CHECK_FALSE(c.acknowledge(*b, 0, {}, t0 + 2s));
  CHECK(c.latest()->id == *a);
}

TEST_CASE("a savepoint maps onto a graph by vertex id and parallelism") {
  job_graph g;
  g.name = "g";
  g.vertices = {{"numbers", "sequence", {{"from", "1"}, {"to", "9"}}, 2},
                {"sums", "sum", {}, 2},
                {"out", "collect", {}, 1}};
  g.edges = {{"numbers", "sums", partitioning::hash},
             {"sums", "out", partitioning::rebalance}};
  execution_graph eg{g};
  completed_checkpoint cp;
  for (size_t flat = 0; flat < eg.size(); ++flat) {
    auto& x = eg.executions()[flat];
    auto& task = eg.tasks()[static_cast<size_t>(x.task)];
    for (auto v : task.vertices)
      if (g.vertices[static_cast<size_t>(v)].id != "out")
        cp.states[static_cast<int32_t>(flat)][g.vertices[static_cast<size_t>(v)].id]
          = fmt::format("{}-{}", g.vertices[static_cast<size_t>(v)].id,
                        x.subtask);
  }
  auto sp = to_savepoint(eg, cp);
  CHECK(sp.vertices.at("sums") == std::vector<std::string>{"sums-0", "sums-1"});
  completed_checkpoint back;
  CHECK_FALSE(from_savepoint(eg, sp, false, "P", back));
  CHECK(back.states == cp.states);
  CHECK(sp.max_parallelism.at("sums") == 128); // Flink's default for 2

  // At parallelism 3 each subtask gets its key groups and the old subtasks
  // whose groups overlap them.
  auto wider = g;
  wider.vertices[1].parallelism = 3;
  execution_graph eg3{wider};
  completed_checkpoint rescaled;
  REQUIRE_FALSE(from_savepoint(eg3, sp, false, "P", rescaled));
  auto share = [&](int32_t subtask) {
    auto& task = eg3.tasks()[1];
    auto bytes = rescaled.states.at(task.first_execution + subtask).at("sums");
    auto r = state::decode_rescaled(bytes);
    REQUIRE(r);
    return *r;
  };
  std::vector<std::pair<key_group_range, std::vector<bool>>> expected{
    {{0, 42}, {true, false}}, {{43, 85}, {true, true}},
    {{86, 127}, {false, true}}};
  for (int32_t i = 0; i < 3; ++i) {
    auto r = share(i);
    CHECK(r.max_parallelism == 128);
    CHECK(r.range == expected[static_cast<size_t>(i)].first);
    REQUIRE(r.old_subtasks.size() == 2);
    CHECK(r.old_subtasks[0].bytes == "sums-0");
    CHECK(r.old_subtasks[1].bytes == "sums-1");
    CHECK(r.old_subtasks[0].keyed == expected[static_cast<size_t>(i)].second[0]);
    CHECK(r.old_subtasks[1].keyed == expected[static_cast<size_t>(i)].second[1]);
  }
  // A vertex at its own parallelism restores as it was.
  CHECK(rescaled.states.at(0).at("numbers") == "numbers-0");

  // Not above the savepoint's key groups, nor with others.
  auto too_wide = g;
  too_wide.vertices[1].parallelism = 200;
  execution_graph eg200{too_wide};
  completed_checkpoint none;
  auto err = from_savepoint(eg200, sp, false, "P", none);
  CHECK(err == make_error(errc::invalid_job));
  CHECK(describe(err)
        == "savepoint 'P' holds vertex 'sums' in 128 key groups (its max "
           "parallelism), the job runs it at parallelism 200");
  execution_graph eg256{g};
  REQUIRE_FALSE(eg256.set_max_parallelism(256));
  err = from_savepoint(eg256, sp, false, "P", none);
  CHECK(describe(err)
        == "savepoint 'P' holds vertex 'numbers' with max parallelism 128 (its "
           "key groups), the job sets pipeline.max-parallelism 256");
  CHECK(describe(eg200.set_max_parallelism(100))
        == "vertex 'sums' runs at parallelism 200, above "
           "pipeline.max-parallelism 100");

  // A savepoint from before key groups is split by key even at its own
  // parallelism: its keys were routed by another rule.
  auto legacy = sp;
  legacy.max_parallelism.clear();
  completed_checkpoint from_legacy;
  REQUIRE_FALSE(from_savepoint(eg, legacy, false, "P", from_legacy));
  auto& sums0 = from_legacy.states.at(eg.tasks()[1].first_execution).at("sums");
  auto r = state::decode_rescaled(sums0);
  REQUIRE(r);
  CHECK(r->old_subtasks[0].keyed);
  CHECK(r->old_subtasks[1].keyed);
}

TEST_CASE("event-log lines are cut at 8 KiB, at a character boundary, with a "
          "marker") {
  CHECK(bounded_log_line("short") == "short");
  auto exact = std::string(max_log_line_bytes, 'x');
  CHECK(bounded_log_line(exact) == exact);
  auto cut = bounded_log_line(std::string(10 << 20, 'x'));
  CHECK(cut == std::string(max_log_line_bytes, 'x') + "... [10477568 bytes cut]");
  // A two-byte character across the limit goes whole.
  auto utf8 = std::string(max_log_line_bytes - 1, 'x') + "\xc3\xa4" + "tail";
  CHECK(bounded_log_line(utf8)
        == std::string(max_log_line_bytes - 1, 'x') + "... [6 bytes cut]");
}

TEST_CASE("weir run refuses operator state its operator cannot split") {
  job_graph g;
  g.name = "g";
  g.vertices = {{"items", "tally", {}, 3},
                {"numbers", "sequence", {{"from", "1"}, {"to", "9"}}, 3},
                {"out", "discard", {}, 3}};
  g.edges = {{"items", "out", partitioning::rebalance},
             {"numbers", "out", partitioning::rebalance}};
  savepoint_data sp;
  state::vertex_snapshot position;
  position.operator_state = "position";
  auto bytes = state::encode_vertex_snapshot(position);
  sp.vertices["numbers"] = {bytes, bytes};
  // A user library's source that does not split its position.
  ops::registry library;
  for (auto* name : {"sequence", "discard"})
    library.add(*ops::registry::builtin().find(name));
  ops::operator_factory tally;
  tally.name = "tally";
  library.add(tally);
  // sequence splits its ranges: any parallelism.
  CHECK_FALSE(check_savepoint_fits(g, sp, false, "P", library));
  sp.vertices["items"] = {bytes, bytes};
  auto err = check_savepoint_fits(g, sp, false, "P", library);
  CHECK(err == make_error(errc::invalid_job));
  CHECK(describe(err)
        == "savepoint 'P' holds operator state of vertex 'items' at "
           "parallelism 2, which operator 'tally' cannot split over "
           "parallelism 3 (docs/state.md § Rescaling)");
  // At its own parallelism it restores as it was.
  g.vertices[0].parallelism = 2;
  CHECK_FALSE(check_savepoint_fits(g, sp, false, "P", library));
  // The built-in sources and transforms with operator state all split it.
  for (auto* name : {"elements", "json_lines", "parse", "generator",
                     "text_file"})
    CHECK(ops::registry::builtin().find(name)->splits_operator_state);
}
