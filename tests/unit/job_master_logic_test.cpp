// The JobMaster's plain classes: slot assignment, job lifecycle, collected
// results, checkpoint requests, stop-with-savepoint and the job's settings.
#include <doctest/doctest.h>

#include "actors/job_master/checkpoint_requests.hpp"
#include "actors/job_master/collected_results.hpp"
#include "actors/job_master/deployed_subtasks.hpp"
#include "actors/job_master/job_lifecycle.hpp"
#include "actors/job_master/job_scheduler.hpp"
#include "actors/job_master/job_settings.hpp"
#include "actors/job_master/slot_assignment.hpp"
#include "actors/job_master/adaptive_parallelism.hpp"
#include "actors/job_master/rescale_operation.hpp"
#include "actors/job_master/stop_with_savepoint.hpp"
#include "config/config.hpp"
#include "messages/errors.hpp"

using namespace weir;
using namespace std::chrono_literals;

namespace {

slot_offer offer(allocation_id alloc) {
  return slot_offer{alloc, 0, {}};
}

std::vector<slot_offer> offers_of(const std::vector<slot_request>& reqs) {
  std::vector<slot_offer> out;
  for (auto& r : reqs)
    out.push_back(offer(r.alloc));
  return out;
}

const auto t0 = std::chrono::steady_clock::time_point{} + 1h;

restart_strategy_config fixed_delay(int64_t attempts) {
  restart_strategy_config c;
  c.type = restart_strategy_config::kind::fixed_delay;
  c.attempts = attempts;
  c.delay = 250ms;
  return c;
}

/// Sink `sink`'s rows (key "k", value i) for i in [from, to].
collected_table numbers(int64_t from, int64_t to,
                        const std::string& sink = "out") {
  collected_table t{sink, default_schema::keyed_numbers(),
                    row_batch{default_schema::keyed_numbers()}};
  for (auto i = from; i <= to; ++i) {
    t.rows.columns[0].push_str("k");
    t.rows.columns[1].push_int(i);
    ++t.rows.rows;
  }
  return t;
}

/// The values of every table's rows, in order.
std::vector<int64_t> values(const std::vector<collected_table>& ts) {
  std::vector<int64_t> out;
  for (auto& t : ts)
    for (size_t i = 0; i < t.rows.rows; ++i)
      out.push_back(t.rows.columns[1].ints[i]);
  return out;
}

job_graph two_vertices(const std::string& sink_op,
                       std::map<std::string, std::string> params = {}) {
  job_graph g;
  g.id = job_id::random();
  g.vertices.push_back(vertex_spec{"src", "sequence", {{"from", "1"}, {"to", "3"}}, 1});
  g.vertices.push_back(vertex_spec{"out", sink_op, std::move(params), 1});
  g.edges.push_back(edge_spec{"src", "out", partitioning::forward});
  return g;
}

} // namespace

// -- slot_assignment ----------------------------------------------------------

TEST_CASE("slot assignment: offers of requested allocations are accepted") {
  slot_assignment<int> slots{2};
  auto reqs = slots.request_all({});
  REQUIRE(reqs.size() == 2);
  CHECK(slots.pending() == 2);
  auto offers = offers_of(reqs);
  offers.push_back(offer(allocation_id::random())); // not ours
  auto got = slots.accept(7, "te-7", offers);
  CHECK(got.allocations == std::vector<allocation_id>{reqs[0].alloc, reqs[1].alloc});
  REQUIRE(got.slots.size() == 2);
  CHECK(got.slots[0].first == 0);
  CHECK(got.slots[1].first == 1);
  CHECK(slots.pending() == 0);
  CHECK(slots.executor_name(1) == "te-7");
  CHECK(slots.executors() == std::vector<int>{7});
  // A second offer of the same allocation is not accepted again.
  CHECK(slots.accept(8, "te-8", offers).allocations.empty());
}

TEST_CASE("slot assignment: a lost executor gives back the slots it held") {
  slot_assignment<int> slots{3};
  auto reqs = slots.request_all({});
  slots.accept(1, "te-1", {offer(reqs[0].alloc), offer(reqs[2].alloc)});
  slots.accept(2, "te-2", {offer(reqs[1].alloc)});
  CHECK(slots.executors() == std::vector<int>{1, 2});
  auto lost = slots.lose_executor(1);
  CHECK(lost.name == "te-1");
  CHECK(lost.slots == std::vector<int32_t>{0, 2});
  CHECK(slots.executors() == std::vector<int>{2});
  CHECK(slots.lose_executor(1).slots.empty()); // nothing held any more
  CHECK(slots.executor_name(0) == "te-1");    // still shown in the status
}

TEST_CASE("slot assignment: lost allocations still pending get replacements") {
  slot_assignment<int> slots{2};
  auto reqs = slots.request_all({});
  slots.accept(1, "te-1", {offer(reqs[0].alloc)});
  resource_profile profile;
  profile.cpu_cores = 2;
  auto fresh = slots.replace({reqs[0].alloc, reqs[1].alloc}, profile);
  REQUIRE(fresh.size() == 1); // the offered one is the executor's business
  CHECK(fresh[0].alloc != reqs[1].alloc);
  CHECK(fresh[0].profile.cpu_cores == 2);
  CHECK(slots.pending() == 1);
  CHECK(slots.accept(2, "te-2", {offer(reqs[1].alloc)}).slots.empty());
  auto got = slots.accept(2, "te-2", {offer(fresh[0].alloc)});
  REQUIRE(got.slots.size() == 1);
  CHECK(got.slots[0].first == 1);
}

TEST_CASE("slot assignment: a restart forgets every slot") {
  slot_assignment<int> slots{1};
  auto reqs = slots.request_all({});
  slots.accept(1, "te-1", offers_of(reqs));
  slots.reset();
  CHECK(slots.executors().empty());
  CHECK(slots.executor_name(0).empty());
  CHECK(slots.pending() == 0);
  CHECK(slots.accept(1, "te-1", offers_of(reqs)).slots.empty());
}

// -- job_lifecycle --------------------------------------------------------------

TEST_CASE("lifecycle: failures restart while the strategy allows, then fail") {
  job_lifecycle job{fixed_delay(1)};
  CHECK(job.set_state(job_state::running));
  auto d = job.on_failure(t0, "boom");
  CHECK(d.what == failure_decision::action::restart);
  CHECK(d.delay == 250ms);
  CHECK(job.restart_delay() == 250ms);
  CHECK(job.state() == job_state::running); // deciding changes nothing
  CHECK(job.set_state(job_state::restarting));
  CHECK(job.on_failure(t0, "again").what == failure_decision::action::ignore);
  job.restart();
  CHECK(job.epoch() == 1);
  CHECK(job.state() == job_state::running);
  d = job.on_failure(t0 + 1s, "boom 2");
  CHECK(d.what == failure_decision::action::fail);
  CHECK(d.cause.rfind("boom 2 (", 0) == 0); // with the strategy's reason
  CHECK(job.fail(d.cause));
  CHECK(job.state() == job_state::failing);
  CHECK(job.failure() == d.cause);
  CHECK(job.end_state(false) == job_state::failed);
}

TEST_CASE("lifecycle: restart strategy none fails with the bare cause") {
  restart_strategy_config none;
  none.type = restart_strategy_config::kind::none;
  job_lifecycle job{none};
  job.set_state(job_state::running);
  auto d = job.on_failure(t0, "subtask failed");
  CHECK(d.what == failure_decision::action::fail);
  CHECK(d.cause == "subtask failed");
}

TEST_CASE("lifecycle: cancel and the end state") {
  job_lifecycle job{restart_strategy_config{}};
  job.set_state(job_state::running);
  // A job FINISHES once its subtasks have finished (a stopped one's sources
  // end their input at the savepoint), not before.
  CHECK(job.end_state(false) == std::nullopt);
  CHECK(job.end_state(true) == job_state::finished);
  CHECK(job.cancel());
  CHECK(job.state() == job_state::cancelling);
  CHECK(job.failure() == "job was canceled");
  CHECK_FALSE(job.cancel());
  CHECK_FALSE(job.fail("late"));
  CHECK(job.end_state(false) == job_state::canceled);
  CHECK(job.finalize());
  CHECK_FALSE(job.finalize());
}

// -- collected_results ------------------------------------------------------------

TEST_CASE("collected results: read from an offset, hand all over") {
  collected_results c;
  c.add(3, numbers(4, 5));
  c.add(1, numbers(1, 3));
  CHECK(values(c.from(0, SIZE_MAX)) == std::vector<int64_t>{1, 2, 3, 4, 5});
  CHECK(values(c.from(3, SIZE_MAX)) == std::vector<int64_t>{4, 5});
  CHECK(c.from(9, SIZE_MAX).empty());
  CHECK(values(c.take_all()) == std::vector<int64_t>{1, 2, 3, 4, 5});
  CHECK(c.from(0, SIZE_MAX).empty());
}

TEST_CASE("collected results: a restart cuts back to the last completed checkpoint") {
  collected_results c;
  c.add(1, numbers(1, 2));
  c.acknowledged(1, 0); // a subtask that is no sink
  c.acknowledged(1, 1);
  c.add(1, numbers(3, 4));
  c.acknowledged(2, 1); // checkpoint 2 never completes
  c.add(1, numbers(5, 5));
  c.commit(1);
  c.cut_back();
  CHECK(values(c.from(0, SIZE_MAX)) == std::vector<int64_t>{1, 2});
  c.add(1, numbers(3, 3));
  c.acknowledged(3, 1);
  c.abort_pending(); // say, a restart
  c.commit(3);       // nothing pending: covers nothing
  c.cut_back();
  CHECK(c.from(0, SIZE_MAX).empty());
  c.add(1, numbers(1, 1));
  c.clear();
  CHECK(c.take_all().empty());
}

TEST_CASE("collected results: one table a sink vertex, in subtask order") {
  collected_results c;
  c.add(4, numbers(7, 7, "other"));
  c.add(2, numbers(3, 4));
  c.add(1, numbers(1, 2));
  auto all = c.take_all();
  REQUIRE(all.size() == 2);
  CHECK(all[0].sink == "out");
  CHECK(values({all[0]}) == std::vector<int64_t>{1, 2, 3, 4});
  CHECK(all[1].sink == "other");
  CHECK(values({all[1]}) == std::vector<int64_t>{7});
}

TEST_CASE("collected results: the total is bounded, a poll gets a bounded part") {
  // A row of (key: string, value: int64) "k": 8 + (1 + 4) + 8 bytes.
  size_t size = 21;
  REQUIRE(row_bytes(numbers(0, 0).rows, 0) == size);
  collected_results c{10 * size};
  CHECK(c.add(1, numbers(1, 6)));
  CHECK(c.add(2, numbers(7, 10)));
  CHECK_FALSE(c.add(2, numbers(11, 11))); // one past the bound
  CHECK(values(c.from(0, SIZE_MAX)).size() == 10);
  CHECK(values(c.from(0, 3 * size)) == std::vector<int64_t>{1, 2, 3});
  CHECK(values(c.from(5, 3 * size)) == std::vector<int64_t>{6, 7, 8});
  CHECK(values(c.from(9, 0)) == std::vector<int64_t>{10}); // at least one
  collected_table big{"out", default_schema::lines(),
                      row_batch{default_schema::lines()}};
  big.rows.columns[0].push_str(std::string(20 * size, 'x'));
  big.rows.rows = 1;
  CHECK_FALSE(c.add(3, big));
  c.clear();
  CHECK_FALSE(c.add(3, big));
  CHECK(c.add(3, numbers(1, 10)));
}

// -- checkpoint_requests ------------------------------------------------------------

TEST_CASE("checkpoint requests: kinds, take and abort") {
  checkpoint_requests reqs;
  reqs.add(1, checkpoint_request::checkpoint({}, false));
  reqs.add(2, checkpoint_request::checkpoint({}, true));
  reqs.add(3, checkpoint_request::savepoint({}, "/sp", savepoint_mode::stop));
  auto r2 = reqs.take(2);
  REQUIRE(r2);
  CHECK(r2->kind() == state::snapshot_kind::full_checkpoint);
  CHECK_FALSE(reqs.take(2));
  auto r3 = reqs.take(3);
  REQUIRE(r3);
  CHECK(r3->is_savepoint());
  CHECK(r3->dir() == "/sp");
  CHECK(r3->stop());
  CHECK(reqs.size() == 1);
  reqs.abort_all("the job restarts"); // promises of no request: no-op
  CHECK(reqs.size() == 0);
}

// -- job_settings ----------------------------------------------------------------------

TEST_CASE("job settings: the job's config applies on top of the cluster's") {
  auto cluster = configuration::load(std::nullopt, {"restart-strategy.type=none"});
  REQUIRE(cluster);
  auto g = two_vertices("collect");
  g.config["restart-strategy.type"] = "fixed-delay";
  g.config["execution.savepoint.path"] = "/sp/savepoint-1";
  g.config["state.backend.type"] = "rocksdb";
  auto s = resolve_job_settings(*cluster, g, "/ckpt");
  REQUIRE(s);
  CHECK(s->restarts.type == restart_strategy_config::kind::fixed_delay);
  CHECK(s->savepoint_path == std::optional<std::string>{"/sp/savepoint-1"});
  CHECK(s->backend.type == "rocksdb");
  CHECK(s->backend.checkpoint_dir == "/ckpt/" + g.id.to_string());
  CHECK(s->slot_profile.cpu_cores == 0); // not a driver job
}

TEST_CASE("job settings: a bad job config is an error naming the key") {
  auto g = two_vertices("discard");
  g.config["restart-strategy.type"] = "sometimes";
  auto s = resolve_job_settings(configuration{}, g, "");
  REQUIRE_FALSE(s);
  CHECK(describe(s.error()).find("restart-strategy.type") != std::string::npos);
}

TEST_CASE("job settings: resumable follows what the sinks guarantee") {
  auto check = [](job_graph g, bool resumable, bool from_storage) {
    auto s = resolve_job_settings(configuration{}, g, "");
    REQUIRE(s);
    CHECK(s->resumable == resumable);
    CHECK(s->resumable_from_storage == from_storage);
  };
  check(two_vertices("discard"), true, true);
  check(two_vertices("collect"), true, false);
  check(two_vertices("stdout"), false, false);
  check(two_vertices("text_file", {{"path", "/out"}}), false, false);
  check(two_vertices("text_file", {{"path", "/out"}, {"delivery", "exactly-once"}}),
        true, true);
  check(two_vertices("my_library_sink"), false, false);
}

namespace {

checkpoint_request stop_request() {
  return checkpoint_request::savepoint({}, "/savepoints", savepoint_mode::stop);
}

using phase = stop_with_savepoint::phase;

} // namespace

TEST_CASE("stop-with-savepoint: taken, written, answered when the job ends") {
  stop_with_savepoint stop;
  CHECK(stop.current() == phase::idle);
  CHECK_FALSE(stop.busy());
  CHECK(stop.begin(7));
  CHECK(stop.current() == phase::taking_savepoint);
  CHECK(stop.busy());
  // One stop at a time; only its own checkpoint is the savepoint.
  CHECK_FALSE(stop.begin(8));
  CHECK(stop.waits_for(7));
  CHECK_FALSE(stop.waits_for(8));
  stop.written(stop_request(), "/savepoints/savepoint-abc-7");
  CHECK(stop.current() == phase::draining);
  CHECK(stop.draining());
  CHECK_FALSE(stop.waits_for(7));
  auto reply = stop.finished();
  REQUIRE(reply);
  CHECK(reply->second == "/savepoints/savepoint-abc-7");
  CHECK(reply->first.stop());
  CHECK(stop.current() == phase::idle);
  CHECK_FALSE(stop.finished());
}

TEST_CASE("stop-with-savepoint: a failed savepoint resumes the sources once") {
  stop_with_savepoint stop;
  CHECK_FALSE(stop.failed()); // nothing halted
  CHECK(stop.begin(3));
  CHECK(stop.failed());
  CHECK(stop.current() == phase::idle);
  CHECK_FALSE(stop.failed());
  // A new stop may begin after a failed one.
  CHECK(stop.begin(4));
  // Once written, the sources end their input: a late failure resumes
  // nothing.
  stop.written(stop_request(), "/savepoints/savepoint-abc-4");
  CHECK_FALSE(stop.failed());
  CHECK(stop.draining());
}

TEST_CASE("stop-with-savepoint: a restart ends the stop and returns its "
          "client") {
  stop_with_savepoint stop;
  CHECK(stop.begin(5));
  CHECK_FALSE(stop.restarted()); // halted, not written: nobody to answer yet
  CHECK(stop.current() == phase::idle);
  CHECK(stop.begin(6));
  stop.written(stop_request(), "/savepoints/savepoint-abc-6");
  auto reply = stop.restarted();
  REQUIRE(reply);
  CHECK(reply->second == "/savepoints/savepoint-abc-6");
  CHECK_FALSE(stop.busy());
  CHECK(std::string{to_string(phase::taking_savepoint)}
        == "taking its savepoint");
}

namespace {

/// A rescale whose client's answers land in `answers` ("" for success).
struct recorded_rescale {
  rescale_operation op;
  std::vector<std::string> answers;

  bool begin(int32_t from, int32_t to, int64_t checkpoint) {
    return op.begin(from, to, checkpoint,
                    [this](std::string failure) { answers.push_back(failure); });
  }
};

using rescale_phase = rescale_operation::phase;

} // namespace

TEST_CASE("rescale: checkpoint, switch, deploy, answered once it runs") {
  recorded_rescale r;
  CHECK_FALSE(r.op.next_round());
  CHECK(r.begin(2, 3, 9));
  CHECK_FALSE(r.begin(2, 4, 10)); // one at a time
  CHECK(r.op.waits_for(9));
  CHECK_FALSE(r.op.waits_for(10));
  CHECK_FALSE(r.op.next_round()); // nothing stops before the checkpoint
  r.op.taken();
  CHECK(r.op.current() == rescale_phase::switching);
  CHECK(r.op.next_round() == 3);
  r.op.switched();
  CHECK(r.op.current() == rescale_phase::deploying);
  CHECK_FALSE(r.op.next_round());
  CHECK(r.answers.empty());
  r.op.running();
  CHECK(r.answers == std::vector<std::string>{""});
  CHECK_FALSE(r.op.busy());
  r.op.running(); // answered once
  CHECK(r.answers.size() == 1);
}

TEST_CASE("rescale: a failed checkpoint refuses it and changes nothing") {
  recorded_rescale r;
  CHECK(r.begin(2, 3, 4));
  CHECK_FALSE(r.op.failed("checkpoint 4 expired")); // no going back
  CHECK(r.answers == std::vector<std::string>{"checkpoint 4 expired"});
  CHECK_FALSE(r.op.busy());
  CHECK_FALSE(r.op.next_round());
  CHECK_FALSE(r.op.failed("again")); // nobody left to answer
  CHECK(r.answers.size() == 1);
}

TEST_CASE("rescale: a failure of the new round goes back to the old "
          "parallelism") {
  recorded_rescale r;
  CHECK(r.begin(2, 4, 6));
  r.op.taken();
  r.op.switched();
  CHECK(r.op.failed("a subtask failed"));
  CHECK(r.answers == std::vector<std::string>{"a subtask failed"});
  CHECK(r.op.current() == rescale_phase::rolling_back);
  CHECK(r.op.next_round() == 2);
  CHECK(r.op.busy()); // no other rescale until the old round is built
  CHECK_FALSE(r.op.failed("twice"));
  r.op.switched();
  CHECK_FALSE(r.op.busy());
  r.op.running(); // the old round running answers nobody
  CHECK(r.answers.size() == 1);
  CHECK(std::string{to_string(rescale_phase::rolling_back)}
        == "going back to the old parallelism");
}

namespace {

/// A subtask handle's stand-in: an address, and empty when 0.
struct fake_subtask {
  int addr = 0;
  int address() const { return addr; }
  explicit operator bool() const { return addr != 0; }
};

/// numbers (2 subtasks) -> out (1): three executions in two shared slots.
job_graph numbers_to_collect() {
  job_graph g;
  g.name = "g";
  g.vertices = {{"numbers", "sequence", {{"from", "1"}, {"to", "9"}}, 2},
                {"out", "collect", {}, 1}};
  g.edges = {{"numbers", "out", partitioning::rebalance}};
  return g;
}

} // namespace

TEST_CASE("deployed subtasks: by execution, complete once all are there") {
  deployed_subtasks<fake_subtask> subtasks;
  subtasks.reset(3);
  CHECK_FALSE(subtasks.complete());
  CHECK_FALSE(subtasks[1]);
  subtasks.deployed(1, fake_subtask{11});
  subtasks.deployed(0, fake_subtask{10});
  CHECK_FALSE(subtasks.complete());
  subtasks.deployed(2, fake_subtask{12});
  CHECK(subtasks.complete());
  CHECK(subtasks[1].address() == 11);
  CHECK(subtasks.execution_of(12) == 2);
  CHECK(subtasks.execution_of(99) == std::nullopt);
  // The next round forgets this one's actors: their ends are stale.
  subtasks.reset(3);
  CHECK_FALSE(subtasks.complete());
  CHECK(subtasks.execution_of(12) == std::nullopt);
  CHECK(subtasks.all().size() == 3);
  CHECK_FALSE(subtasks[2]);
}

// -- job_scheduler ---------------------------------------------------------------

TEST_CASE("job scheduler: a round's slots, subtasks and failure sites; a new "
          "round starts over") {
  job_scheduler<int, fake_subtask> s{numbers_to_collect()};
  CHECK(s.graph().size() == 3);
  CHECK(s.slots().size() == 2);
  CHECK_FALSE(s.restores_state());
  CHECK(s.slots_requested_ms() == 0);
  auto reqs = s.request_slots({}, 1234);
  CHECK(reqs.size() == 2);
  CHECK(s.slots_requested_ms() == 1234);
  s.slots().accept(7, "te-7", offers_of(reqs));
  s.subtasks().deployed(0, fake_subtask{10});
  s.slots_unmet("no taskmanager has 4 cores");
  // Where a failure happened: the subtask and the TaskExecutor of its slot.
  auto first = s.graph().executions()[0].attempt;
  auto site = s.site_of(0);
  CHECK(site.task == s.graph().tasks()[0].name + " (1/2)");
  CHECK(site.location == "te-7");
  // A new round: new attempts, no slots, nothing deployed; the request's
  // time and the ResourceManager's note stay until the next request.
  s.new_round(true);
  CHECK(s.restores_state());
  CHECK(s.graph().find(first) == -1);
  CHECK(s.graph().executions()[0].attempt_number == 1);
  CHECK(s.slots().executor_name(0).empty());
  CHECK(s.slots().pending() == 0);
  CHECK_FALSE(s.subtasks()[0]);
  CHECK(s.site_of(0).location.empty());
  CHECK(s.slots_unmet() == "no taskmanager has 4 cores");
  s.new_round(false);
  CHECK_FALSE(s.restores_state());
}

TEST_CASE("job scheduler: accepted slots deploy their subtasks; the round "
          "starts once all are deployed") {
  job_scheduler<int, fake_subtask> s{numbers_to_collect()};
  auto reqs = s.request_slots({}, 1);
  auto accepted = s.slots().accept(7, "te-7", offers_of(reqs));
  REQUIRE(accepted.slots.size() == 2);
  state_backend_desc backend;
  backend.type = "rocksdb";
  std::map<int32_t, operator_states> checkpoint{{2, {{"out", "state"}}}};
  // Slot 0 holds numbers (1/2) and out (1/1), slot 1 numbers (2/2).
  auto first = s.deploy({accepted.slots[0]}, backend, &checkpoint);
  CHECK(first.executions == std::vector<int32_t>{0, 2});
  REQUIRE(first.tasks.size() == 2);
  CHECK(first.tasks[0].backend.type == "rocksdb");
  CHECK(first.tasks[1].alloc == accepted.slots[0].second);
  // The first round of a job without a savepoint restores nothing.
  CHECK(first.tasks[1].restore.empty());
  for (auto flat : first.executions)
    CHECK(s.graph().executions()[static_cast<size_t>(flat)].state
          == execution_state::deploying);
  CHECK_FALSE(
    s.deployed(first.executions, {fake_subtask{10}, fake_subtask{12}}));
  auto second = s.deploy({accepted.slots[1]}, backend, &checkpoint);
  CHECK(second.executions == std::vector<int32_t>{1});
  CHECK(s.deployed(second.executions, {fake_subtask{11}}));
  // Each producer sends to the one consumer; the sink to none.
  auto to = s.consumers_of(1);
  REQUIRE(to.size() == 1);
  REQUIRE(to[0].size() == 1);
  CHECK(to[0][0].address() == 12);
  CHECK(s.consumers_of(2).empty());
  // A round that resumes restores each subtask's part of the checkpoint.
  s.new_round(true);
  auto again = s.slots().accept(8, "te-8", offers_of(s.request_slots({}, 2)));
  auto resumed = s.deploy(again.slots, backend, &checkpoint);
  CHECK(resumed.executions.size() == 3);
  for (size_t i = 0; i < resumed.tasks.size(); ++i)
    CHECK(resumed.tasks[i].restore
          == (resumed.executions[i] == 2 ? checkpoint[2] : operator_states{}));
}

namespace {

/// events (4) -hash-> counts (4) -forward-> out (4), and its upper bounds.
adaptive_parallelism adaptive_counts(std::vector<int32_t> upper) {
  job_graph g;
  g.name = "counts";
  for (auto* id : {"events", "counts", "out"}) {
    vertex_spec v;
    v.id = id;
    v.op = "map";
    v.parallelism = 4;
    g.vertices.push_back(v);
  }
  g.edges.push_back({"events", "counts", partitioning::hash, {"key"}});
  g.edges.push_back({"counts", "out", partitioning::forward});
  adaptive_options o;
  o.enabled = true;
  o.stabilization = 10s;
  return adaptive_parallelism{o, g, std::move(upper)};
}

std::vector<int32_t> parallelisms_of(const job_graph& g) {
  std::vector<int32_t> out;
  for (auto& v : g.vertices)
    out.push_back(v.parallelism);
  return out;
}

} // namespace

TEST_CASE("adaptive scheduler: each vertex at min(its bound, the slots)") {
  auto a = adaptive_counts({4, 4, 4});
  CHECK(a.desired() == 4);
  CHECK(a.target(0) == 0);
  CHECK(a.target(3) == 3);
  CHECK(a.target(9) == 4);
  CHECK(parallelisms_of(a.graph_at(2)) == std::vector<int32_t>{2, 2, 2});
  // Bounds that differ: the ends of a forward edge run at the lower one.
  auto b = adaptive_counts({1, 8, 3});
  CHECK(b.desired() == 8);
  CHECK(parallelisms_of(b.graph_at(6)) == std::vector<int32_t>{1, 3, 3});
  CHECK(parallelisms_of(b.graph_at(2)) == std::vector<int32_t>{1, 2, 2});
}

TEST_CASE("adaptive scheduler: more slots must stay available for the "
          "stabilization timeout") {
  auto a = adaptive_counts({4, 4, 4});
  using clock = adaptive_parallelism::clock;
  auto t0 = clock::time_point{} + 1h;
  CHECK_FALSE(a.scale_up(2, 2, t0));      // nothing more
  CHECK_FALSE(a.scale_up(2, 3, t0));      // more since t0
  CHECK_FALSE(a.scale_up(2, 4, t0 + 9s)); // not yet
  CHECK(a.scale_up(2, 4, t0 + 10s) == 4);
  // Slots that went away again start the wait over.
  CHECK_FALSE(a.scale_up(2, 3, t0 + 20s));
  CHECK_FALSE(a.scale_up(2, 2, t0 + 21s));
  CHECK_FALSE(a.scale_up(2, 3, t0 + 29s));
  CHECK(a.scale_up(2, 3, t0 + 39s) == 3);
  CHECK_FALSE(a.scale_up(4, 9, t0 + 60s)); // at its bound already
}
