// The subtask's run loop (subtask_runner) without an actor system: a
// recording port stands in for the subtask actor.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "dataplane/subtask_runner.hpp"
#include "operators/registry.hpp"
#include "storage/files.hpp"
#include "storage/state/snapshot_format.hpp"
#include "storage/state_handle.hpp"
#include "tests/unit/runtime_fixtures.hpp"
#include "tests/unit/temp_dir.hpp"

using namespace weir;
using namespace weir::test;

namespace {

std::string show_records(const std::vector<record>& rs) {
  std::string out;
  for (auto& r : rs)
    out += (out.empty() ? "" : ",") + (r.key.empty() ? "" : r.key + "=")
           + std::to_string(r.num);
  return out;
}

/// Records every call as a line of text; timers are kept as pending flags
/// that the test fires.
class recording_port : public runner_port {
public:
  std::vector<std::string> log;
  std::vector<record> collected;
  std::map<int64_t, operator_states> acks;
  std::map<int64_t, int64_t> alignments; ///< by checkpoint id
  /// The snapshots handed to the writer thread, by checkpoint.
  std::map<int64_t, chain_snapshot> to_write;
  bool produce_due = false;
  bool flush_due = false;
  bool tick_due = false;
  /// The waits of schedule_timers calls, in order.
  std::vector<std::chrono::milliseconds> timers_due;
  int metrics = 0;
  io_metrics last_metrics;
  /// What waiting_input answers (the actor's mailbox).
  int32_t mailbox = 0;

  /// The lines logged since the last call.
  std::vector<std::string> take() {
    return std::exchange(log, {});
  }

  void send_batch(size_t gate, int32_t consumer, int32_t channel, int64_t seq,
                  row_batch&& b) override {
    log.push_back(fmt::format("batch g{} c{} ch{} #{} [{}]", gate, consumer,
                              channel, seq, show_records(to_records(b))));
  }
  void send_barrier(size_t gate, int32_t consumer, int32_t channel,
                    int64_t seq, const checkpoint_barrier& b) override {
    log.push_back(fmt::format("barrier g{} c{} ch{} #{} {} {}", gate, consumer,
                              channel, seq, b.id, to_string(b.kind)));
  }
  void send_watermark(size_t gate, int32_t consumer, int32_t channel,
                      int64_t seq, const watermark_mark& m) override {
    log.push_back(fmt::format("watermark g{} c{} ch{} #{} {}{}", gate,
                              consumer, channel, seq, m.time,
                              m.idle ? " idle" : ""));
  }
  void send_end(size_t gate, int32_t consumer, int32_t channel,
                int64_t events) override {
    log.push_back(
      fmt::format("end g{} c{} ch{} after {}", gate, consumer, channel, events));
  }
  void send_backlog(size_t gate, int32_t consumer, int32_t channel,
                    int32_t waiting) override {
    log.push_back(fmt::format("backlog g{} c{} ch{} {}", gate, consumer,
                              channel, waiting));
  }
  void return_credit(int32_t channel, int32_t port, int32_t n) override {
    log.push_back(n == 1 ? fmt::format("credit ch{} p{}", channel, port)
                         : fmt::format("credit ch{} p{} x{}", channel, port,
                                       n));
  }
  void report(execution_state s, const io_metrics& m,
              std::string error) override {
    log.push_back(fmt::format("{} in={} out={}{}", to_string(s), m.records_in,
                              m.records_out, error.empty() ? "" : " " + error));
  }
  void send_metrics(const io_metrics& m) override {
    ++metrics;
    last_metrics = m;
  }
  void hand_over(collected_table&& rows) override {
    auto rs = to_records(std::vector<collected_table>{std::move(rows)});
    collected.insert(collected.end(), rs.begin(), rs.end());
  }
  void acknowledge(int64_t id, int64_t alignment_ms,
                   operator_states&& states) override {
    log.push_back(fmt::format("ack {}", id));
    alignments[id] = alignment_ms;
    acks[id] = std::move(states);
  }
  void write_snapshot(int64_t id, chain_snapshot&& snap) override {
    log.push_back(fmt::format("write {}", id));
    to_write[id] = std::move(snap);
  }

  /// What the subtask's writer thread does with snapshot `id`.
  operator_states write(int64_t id) {
    auto& snap = to_write.at(id);
    auto states = std::move(snap.ready);
    for (auto& [vertex, finish] : snap.deferred)
      states[vertex] = finish();
    return states;
  }
  void schedule_produce(std::chrono::microseconds) override {
    CHECK_FALSE(produce_due); // one timer at a time
    produce_due = true;
  }
  void schedule_flush(std::chrono::milliseconds timeout) override {
    CHECK(timeout == subtask_runner::buffer_timeout);
    CHECK_FALSE(flush_due);
    flush_due = true;
  }
  void schedule_metrics(std::chrono::milliseconds timeout) override {
    CHECK(timeout == subtask_runner::metrics_interval);
    CHECK_FALSE(tick_due);
    tick_due = true;
  }
  void schedule_timers(std::chrono::milliseconds timeout) override {
    timers_due.push_back(timeout);
  }
  int32_t waiting_input() override {
    return mailbox;
  }
};

vertex_spec vertex(std::string id, std::string op,
                   std::map<std::string, std::string> params = {}) {
  return vertex_spec{std::move(id), std::move(op), std::move(params), 1};
}

/// A deployment of `chain` with input gates of `input_channels` channels
/// whose rows are `input`, keyed by `input_key` (hash inputs), and a forward
/// output to `consumers` subtasks. Each vertex's output schema is what the
/// planner derives (an unknown operator's stays empty: building the chain
/// reports it).
task_deployment deployment(std::vector<vertex_spec> chain,
                           std::vector<int32_t> input_channels = {},
                           int32_t consumers = 0,
                           schema input = default_schema::numbers(),
                           std::vector<std::string> input_key = {}) {
  task_deployment d;
  d.task_name = "task";
  d.chain = std::move(chain);
  for (auto n : input_channels)
    d.inputs.push_back(input_gate_desc{n, false});
  if (consumers > 0)
    d.outputs.push_back(desc(partitioning::forward, consumers));
  if (!d.inputs.empty()) {
    d.input = std::move(input);
    d.input_key = std::move(input_key);
  }
  const schema* in = d.inputs.empty() ? nullptr : &d.input;
  auto key = d.input_key;
  for (size_t i = 0; i < d.chain.size(); ++i) {
    auto& v = d.chain[i];
    auto r = i == 0 && d.inputs.empty() ? ops::role::source
             : i + 1 == d.chain.size() && d.outputs.empty() ? ops::role::sink
                                                             : ops::role::transform;
    v.output = ops::registry::builtin()
                 .output_schema(v.op, r, v.params, ops::schema_query{in, key})
                 .value;
    in = &v.output;
    key.clear(); // chained vertices are joined by forward edges
  }
  return d;
}

/// A keyed count of (key, value) rows on `channels` input channels, its
/// counts forwarded to one consumer.
task_deployment keyed_count(std::vector<int32_t> channels) {
  return deployment({vertex("counts", "count")}, std::move(channels), 1,
                    default_schema::keyed_numbers(), {"key"});
}

/// A runner over `d` with its recording port, opened.
struct fixture {
  recording_port port;
  task_deployment d;
  subtask_runner runner;

  fixture(task_deployment dep, exchange_options o = opts(1000),
          const operator_states& restore = {},
          load_meter::clock_fn clock = load_meter::clock::now)
    : d(std::move(dep)), runner(d, port, std::move(clock), o) {
    chain_env env;
    env.exchange = o;
    runner.open(build_chain(d, env), restore);
  }

  /// Fires the produce timer until the source stops asking.
  void run_source() {
    while (port.produce_due) {
      port.produce_due = false;
      runner.produce();
    }
  }
};

row_batch batch_of(int64_t from, int64_t to) {
  return numbers(from, to);
}

/// What the port logged.
using log_lines = std::vector<std::string>;

/// Starts `f` (a keyed count with one input channel), counts `n` keys and
/// takes checkpoint 1.
void count_keys_then_checkpoint(fixture& f, int n) {
  f.runner.start();
  std::vector<record> keys;
  for (int i = 0; i < n; ++i)
    keys.push_back(record::integer(fmt::format("k{}", i), 1));
  f.runner.on_batch(0, 0, 0, to_rows(keys));
  f.runner.on_barrier(0, 0, 1, checkpoint_barrier{1, checkpoint_kind::checkpoint});
  f.port.take();
}

} // namespace

TEST_SUITE("subtask_runner") {

TEST_CASE("a source runs to its end and the subtask finishes") {
  fixture f{deployment({vertex("src", "sequence", {{"from", "1"}, {"to", "5"}}),
                        vertex("out", "collect")})};
  CHECK(f.port.take() == log_lines{"INITIALIZING in=0 out=0"});
  CHECK(f.runner.current_phase() == subtask_runner::phase::created);
  CHECK_FALSE(f.port.produce_due); // nothing runs before the wiring
  f.runner.start();
  CHECK(f.port.take() == log_lines{"RUNNING in=0 out=0"});
  CHECK(f.port.produce_due);
  f.run_source();
  CHECK(f.port.take() == log_lines{"FINISHED in=5 out=5"});
  CHECK(show_records(f.port.collected) == "1,2,3,4,5");
  CHECK(f.runner.current_phase() == subtask_runner::phase::finished);
  f.runner.cancel(); // too late: nothing happens
  CHECK(f.port.take().empty());
}

TEST_CASE("a chain that cannot be built or opened reports FAILED") {
  fixture f{deployment({vertex("src", "no_such_operator"),
                        vertex("out", "collect")})};
  auto log = f.port.take();
  REQUIRE(log.size() == 1);
  CHECK(log[0].find("FAILED in=0 out=0 task (1/1): vertex 'src': unknown "
                    "operator 'no_such_operator'")
        == 0);
  CHECK(f.runner.terminal());
  f.runner.start();
  f.runner.on_batch(0, 0, 0, batch_of(1, 1));
  CHECK(f.port.take().empty());
}

TEST_CASE("input that arrives before the start waits for it") {
  fixture f{deployment({vertex("id", "map", {{"function", "identity"}})}, {1},
                       1)};
  f.port.take();
  f.runner.on_batch(0, 3, 0, batch_of(1, 2));
  CHECK(f.port.take().empty());
  f.runner.start();
  CHECK(f.port.take() == log_lines{"RUNNING in=0 out=0", "credit ch0 p3"});
  CHECK(f.port.flush_due); // the batch is still open
  f.port.flush_due = false;
  f.runner.flush();
  CHECK(f.port.take() == log_lines{"batch g0 c0 ch0 #0 [1,2]"});
}

TEST_CASE("credits: a backlogged output withholds the input's credits") {
  // Batches of 2 records, 1 credit per consumer.
  fixture f{deployment({vertex("id", "map", {{"function", "identity"}})}, {1},
                       1),
            opts(2, 1)};
  f.runner.start();
  f.port.take();
  f.runner.on_batch(0, 0, 0, batch_of(1, 2));
  CHECK(f.port.take() == log_lines{"batch g0 c0 ch0 #0 [1,2]", "credit ch0 p0"});
  f.runner.on_batch(0, 0, 1, batch_of(3, 4)); // no credit left downstream
  f.runner.on_batch(0, 0, 2, batch_of(5, 6));
  // Both credits withheld; the consumer hears of the backlog once.
  CHECK(f.port.take() == log_lines{"backlog g0 c0 ch0 1"});
  f.runner.on_credit(0, 0, 1);
  CHECK(f.port.take()
        == log_lines{"batch g0 c0 ch0 #1 [3,4]", "backlog g0 c0 ch0 1"});
  f.runner.on_credit(0, 0, 5);
  CHECK(f.port.take() == log_lines{"batch g0 c0 ch0 #2 [5,6]", "credit ch0 p0",
                               "credit ch0 p0"});
}

TEST_CASE("credits: a wide input gate lends its floating credits where "
          "data waits, round-robin") {
  // 40 channels would need 80 exclusive credits, past the 64 allowed: all
  // of the gate's 8 credits float.
  fixture f{deployment({vertex("id", "map", {{"function", "identity"}})}, {40},
                       1),
            opts(1000, 1)};
  f.runner.start();
  f.port.take();
  f.runner.on_backlog(3, 0, 20);
  CHECK(f.port.take() == log_lines{"credit ch3 p0 x8"});
  f.runner.on_backlog(7, 0, 1);
  CHECK(f.port.take().empty()); // nothing left to lend
  f.runner.on_batch(3, 0, 0, batch_of(1, 2));
  CHECK(f.port.take() == log_lines{"credit ch3 p0"}); // back, and lent on
  f.runner.on_batch(3, 0, 1, batch_of(3, 4));
  CHECK(f.port.take() == log_lines{"credit ch7 p0"}); // now channel 7's turn
}

TEST_CASE("a backlogged source stops producing until credit comes") {
  fixture f{deployment({vertex("src", "sequence", {{"from", "1"}, {"to", "6"}})},
                       {}, 1),
            opts(2, 1)};
  f.runner.start();
  f.port.take();
  f.run_source();
  CHECK(f.port.take()
        == log_lines{"batch g0 c0 ch0 #0 [1,2]", "backlog g0 c0 ch0 1"});
  CHECK_FALSE(f.port.produce_due); // backlogged: no timer
  f.runner.on_credit(0, 0, 1);
  CHECK(f.port.produce_due);
  f.runner.on_credit(0, 0, 10);
  f.run_source();
  CHECK(f.port.take()
        == log_lines{"batch g0 c0 ch0 #1 [3,4]", "batch g0 c0 ch0 #2 [5,6]",
                 "end g0 c0 ch0 after 3", "FINISHED in=6 out=6"});
}

TEST_CASE("barriers align, then the snapshot is taken and the barrier "
          "forwarded after the data before it") {
  // Two input channels into a keyed count.
  fixture f{keyed_count({2})};
  f.runner.start();
  f.port.take();
  checkpoint_barrier b{7, checkpoint_kind::savepoint};
  f.runner.on_batch(0, 0, 0, numbers(1, 2, "a"));
  f.runner.on_barrier(0, 0, 1, b);
  f.runner.on_batch(0, 0, 2, numbers(3, 3, "a")); // waits
  CHECK(f.port.take() == log_lines{"credit ch0 p0", "credit ch0 p0"});
  f.runner.on_batch(1, 0, 0, numbers(4, 4, "b"));
  CHECK(f.port.take() == log_lines{"credit ch1 p0"});
  f.runner.on_barrier(1, 0, 1, b); // aligned
  auto log = f.port.take();
  CHECK(log
        == log_lines{"credit ch1 p0", "barrier g0 c0 ch0 #0 7 savepoint", "ack 7",
                 "credit ch0 p0"}); // then the batch that waited
  REQUIRE(f.port.acks.count(7) == 1);
  CHECK(f.port.acks[7].count("counts") == 1); // the keyed counts
  f.runner.on_end(0, 3);
  f.runner.on_end(1, 2);
  CHECK(f.port.take()
        == log_lines{"batch g0 c0 ch0 #1 [a=3,b=1]", "end g0 c0 ch0 after 2",
                 "FINISHED in=4 out=2"});
}

TEST_CASE("a newer checkpoint's barrier abandons the pending alignment; "
          "what it held comes before the newer cut") {
  // Checkpoint 7 reached channel 0 only (its JobMaster died while it
  // triggered the sources); checkpoint 8 comes on channel 1 first.
  fixture f{keyed_count({2})};
  f.runner.start();
  f.port.take();
  checkpoint_barrier b7{7, checkpoint_kind::checkpoint};
  checkpoint_barrier b8{8, checkpoint_kind::checkpoint};
  f.runner.on_batch(0, 0, 0, numbers(1, 2, "a"));
  f.runner.on_barrier(0, 0, 1, b7);
  f.runner.on_batch(0, 0, 2, numbers(3, 3, "a")); // held by 7's alignment
  f.port.take();
  // The held batch is processed now, before checkpoint 8's snapshot.
  f.runner.on_barrier(1, 0, 0, b8);
  CHECK(f.port.take() == log_lines{"credit ch1 p0", "credit ch0 p0"});
  f.runner.on_barrier(0, 0, 3, b8); // aligned
  auto log = f.port.take();
  CHECK(std::find(log.begin(), log.end(), "ack 8") != log.end());
  CHECK(f.port.acks.count(7) == 0);
}

TEST_CASE("a subtask whose JobMaster is lost does not end until it is "
          "adopted") {
  fixture f{deployment({vertex("src", "sequence", {{"from", "1"}, {"to", "3"}})},
                       {}, 1),
            opts(2)};
  f.runner.start();
  f.port.take();
  f.port.produce_due = false;
  f.runner.detach();
  f.runner.produce(); // 1, 2
  f.runner.produce(); // 3, and the end of the input: it waits
  f.runner.produce();
  auto log = f.port.take();
  CHECK(std::find(log.begin(), log.end(), "FINISHED in=3 out=3") == log.end());
  CHECK(f.runner.current_phase() == subtask_runner::phase::running);
  f.runner.attach(); // adopted: it ends now
  log = f.port.take();
  CHECK(std::find(log.begin(), log.end(), "FINISHED in=3 out=3") != log.end());
}

TEST_CASE("a source takes a triggered checkpoint; others ignore triggers") {
  fixture src{deployment({vertex("src", "sequence", {{"from", "1"}, {"to", "3"}})},
                         {}, 1),
              opts(2)};
  src.runner.start();
  src.port.take();
  src.port.produce_due = false;
  src.runner.produce(); // 1, 2: a full batch
  src.runner.trigger(checkpoint_barrier{1, checkpoint_kind::checkpoint});
  CHECK(src.port.take()
        == log_lines{"batch g0 c0 ch0 #0 [1,2]", "barrier g0 c0 ch0 #1 1 checkpoint",
                 "ack 1"});
  CHECK(src.port.acks[1].count("src") == 1); // the source's position
  fixture other{deployment({vertex("id", "map", {{"function", "identity"}})},
                           {1}, 1)};
  other.runner.start();
  other.port.take();
  other.runner.trigger(checkpoint_barrier{1, checkpoint_kind::checkpoint});
  CHECK(other.port.take().empty());
}

TEST_CASE("the end of every input channel finishes the subtask") {
  fixture f{deployment({vertex("out", "collect")}, {1, 1})};
  f.runner.start();
  f.port.take();
  f.runner.on_batch(1, 2, 0, batch_of(1, 1));
  f.runner.on_end(1, 1);
  f.runner.on_end(0, 1); // batch 0 of channel 0 is still missing
  CHECK(f.port.take() == log_lines{"credit ch1 p2"});
  f.runner.on_batch(0, 0, 0, batch_of(2, 2));
  CHECK(f.port.take() == log_lines{"credit ch0 p0", "FINISHED in=2 out=2"});
  CHECK(show_records(f.port.collected) == "1,2");
}

TEST_CASE("cancel reports CANCELED and stops processing") {
  fixture f{deployment({vertex("id", "map", {{"function", "identity"}})}, {1},
                       1)};
  f.runner.start();
  f.port.take();
  f.runner.cancel();
  CHECK(f.port.take() == log_lines{"CANCELED in=0 out=0"});
  CHECK(f.runner.current_phase() == subtask_runner::phase::canceled);
  f.runner.on_batch(0, 0, 0, batch_of(1, 1));
  f.runner.on_credit(0, 0, 1);
  f.runner.cancel();
  CHECK(f.port.take().empty());
}

TEST_CASE("an operator's exception becomes a FAILED report") {
  temp_dir dir;
  fixture f{deployment({vertex("flaky", "map",
                               {{"function", "fail_once"},
                                {"marker", dir.sub("marker")}})},
                       {1}, 1)};
  f.runner.start();
  f.port.take();
  f.runner.on_batch(0, 0, 0, batch_of(1, 1));
  f.runner.on_batch(0, 0, 1, batch_of(2, 2)); // not processed any more
  auto log = f.port.take();
  REQUIRE(log.size() == 1);
  CHECK(log[0].find("FAILED in=1 out=0 task (1/1): ") == 0);
  CHECK(log[0].find("injected failure (fail_once") != std::string::npos);
  CHECK(f.runner.current_phase() == subtask_runner::phase::failed);
}

TEST_CASE("a snapshot written off the thread is acknowledged, a failed "
          "write fails the subtask") {
  fixture f{deployment({vertex("id", "map", {{"function", "identity"}})}, {1},
                       1)};
  f.runner.start();
  f.port.take();
  f.runner.snapshot_written(3, operator_states{{"id", "x"}});
  CHECK(f.port.take() == log_lines{"ack 3"});
  // A checkpoint a newer one subsumed (a savepoint completed first) fails
  // nothing; one nobody subsumed fails the subtask.
  f.runner.commit(5);
  f.port.take();
  f.runner.snapshot_failed(4, "No such file or directory");
  CHECK(f.port.take().empty());
  CHECK(f.runner.current_phase() != subtask_runner::phase::failed);
  f.runner.snapshot_failed(6, "disk full");
  CHECK(f.port.take()
        == log_lines{"FAILED in=0 out=0 task (1/1): could not write checkpoint 6: "
                 "disk full"});
}

TEST_CASE("with checkpoint storage, large state goes to a file off the "
          "thread and the acknowledgement carries its handle") {
  temp_dir dir;
  auto d = keyed_count({1});
  d.backend.checkpoint_dir = dir.sub("job");
  fixture f{d};
  count_keys_then_checkpoint(f, 3000);
  // Nothing is written on the subtask's thread: the writer does it.
  REQUIRE(f.port.to_write.count(1) == 1);
  CHECK(f.port.acks.empty());
  CHECK_FALSE(std::filesystem::exists(dir.sub("job/chk-1.d")));
  f.runner.snapshot_written(1, f.port.write(1));
  CHECK(f.port.take() == log_lines{"ack 1"});
  auto& acked = f.port.acks[1].at("counts");
  auto handle = storage::decode_state_handle(acked);
  REQUIRE(handle);
  CHECK(acked.size() < 200); // 3000 keys' state is not in the message
  CHECK(handle->path.rfind(dir.sub("job/chk-1.d/counts-0-"), 0) == 0);
  CHECK(handle->size > static_cast<int64_t>(storage::inline_state_limit));
  CHECK(std::filesystem::file_size(handle->path)
        == static_cast<uintmax_t>(handle->size));

  SUBCASE("a new attempt restores from the handle") {
    fixture again{d, opts(1000), f.port.acks[1]};
    again.runner.start();
    again.runner.on_batch(0, 0, 0, numbers(1, 1, "k7"));
    again.runner.on_end(0, 1);
    auto log = again.port.take();
    CHECK(log.back() == "FINISHED in=1 out=3000");
    CHECK(std::any_of(log.begin(), log.end(), [](const std::string& line) {
      return line.find("k7=2") != std::string::npos;
    }));
  }
  SUBCASE("a state file that changed fails the restore, naming it") {
    auto bytes = storage::read_whole_file(handle->path);
    REQUIRE(bytes);
    (*bytes)[bytes->size() / 2] ^= 1;
    REQUIRE_FALSE(storage::write_durably(handle->path, *bytes));
    fixture again{d, opts(1000), f.port.acks[1]};
    auto log = again.port.take();
    REQUIRE(log.size() == 1);
    CHECK(log[0].find("FAILED in=0 out=0 task (1/1): vertex 'counts': state "
                      "file '" + handle->path + "' differs from what the "
                      "checkpoint recorded")
          == 0);
  }
}

TEST_CASE("without checkpoint storage, small or any state stays in the "
          "acknowledgement") {
  fixture f{keyed_count({1})};
  count_keys_then_checkpoint(f, 3000);
  REQUIRE(f.port.acks.count(1) == 1);
  CHECK_FALSE(storage::is_state_handle(f.port.acks[1].at("counts")));
}

} // TEST_SUITE

namespace {

/// A clock the test sets by hand, in milliseconds since its epoch.
struct scripted_clock {
  int64_t ms = 0;
  load_meter::clock_fn fn() {
    return [this] {
      return load_meter::clock::time_point{std::chrono::milliseconds{ms}};
    };
  }
};

auto fields(const task_load& x) {
  return std::tie(x.bytes_in, x.bytes_out, x.busy_ms, x.idle_ms,
                  x.backpressured_ms, x.records_in_per_s, x.records_out_per_s,
                  x.bytes_in_per_s, x.bytes_out_per_s, x.busy_ms_per_s,
                  x.idle_ms_per_s, x.backpressured_ms_per_s, x.input_queue,
                  x.output_queue);
}

bool same(const task_load& a, const task_load& b) {
  return fields(a) == fields(b);
}

} // namespace

TEST_SUITE("load_meter") {

TEST_CASE("a checkpoint's alignment: from its first barrier to its last") {
  scripted_clock t;
  fixture f{keyed_count({2}), opts(1000), {}, t.fn()};
  f.runner.start();
  checkpoint_barrier b{7, checkpoint_kind::checkpoint};
  t.ms = 100;
  f.runner.on_barrier(0, 0, 0, b);
  t.ms = 130;
  f.runner.on_batch(1, 0, 0, numbers(4, 4, "b"));
  t.ms = 145;
  f.runner.on_barrier(1, 0, 1, b); // aligned
  REQUIRE(f.port.acks.count(7) == 1);
  CHECK(f.port.alignments[7] == 45);
}

TEST_CASE("time splits into busy, idle and backpressured; rates per window") {
  scripted_clock t;
  load_meter m{t.fn()};
  m.enter(); // before the start: nothing counts
  m.leave(true);
  CHECK(same(m.sample(0, 0, 0, 0), task_load{}));
  m.start();
  t.ms = 100;
  m.enter(); // idle 0..100
  m.batch_in(1000);
  t.ms = 150;
  m.leave(true); // busy 100..150, then output waits
  t.ms = 400;
  m.enter(); // backpressured 150..400
  m.batch_out(3000);
  t.ms = 420;
  m.leave(false); // busy 400..420
  CHECK_FALSE(m.sample_due(std::chrono::milliseconds{500}));
  CHECK(m.sample_due(std::chrono::milliseconds{420}));
  t.ms = 500; // idle 420..500
  auto a = m.sample(40, 20, 2, 1);
  CHECK(a.bytes_in == 1000);
  CHECK(a.bytes_out == 3000);
  CHECK(a.busy_ms == 70);
  CHECK(a.idle_ms == 180);
  CHECK(a.backpressured_ms == 250);
  CHECK(a.records_in_per_s == 80.0);
  CHECK(a.records_out_per_s == 40.0);
  CHECK(a.bytes_in_per_s == 2000.0);
  CHECK(a.bytes_out_per_s == 6000.0);
  CHECK(a.busy_ms_per_s == 140.0);
  CHECK(a.idle_ms_per_s == 360.0);
  CHECK(a.backpressured_ms_per_s == 500.0);
  CHECK(a.input_queue == 2);
  CHECK(a.output_queue == 1);

  t.ms = 600;
  m.enter(); // idle 500..600
  t.ms = 610;
  m.enter(); // nested: one handler
  t.ms = 620;
  m.leave(true);
  t.ms = 700;
  m.leave(false); // busy 600..700
  t.ms = 750; // idle 700..750
  auto b = m.sample(100, 20, 0, 0);
  CHECK(b.busy_ms == 170);
  CHECK(b.idle_ms == 330);
  CHECK(b.backpressured_ms == 250);
  CHECK(b.records_in_per_s == 240.0);
  CHECK(b.records_out_per_s == 0.0);
  CHECK(b.bytes_in_per_s == 0.0);
  CHECK(b.busy_ms_per_s == 400.0);
  CHECK(b.idle_ms_per_s == 600.0);
  CHECK(b.backpressured_ms_per_s == 0.0);
  CHECK(same(m.sample(100, 20, 0, 0), b)); // an empty window keeps the rates

  t.ms = 800;
  m.enter(); // idle 750..800
  t.ms = 950;
  auto c = m.sample(100, 20, 0, 0); // inside a handler: busy so far counts
  CHECK(c.busy_ms == 320);
  CHECK(c.busy_ms_per_s == 750.0);
  CHECK(c.idle_ms_per_s == 250.0);
  CHECK(c.busy_ms + c.idle_ms + c.backpressured_ms == 950);
  t.ms = 1000;
  m.leave(false);
  CHECK(m.sample(100, 20, 0, 0).busy_ms == 370);
}

} // TEST_SUITE

TEST_SUITE("subtask_runner") {

TEST_CASE("a subtask reports its load: bytes, time waiting for credit, "
          "queues; a quiet one once more, on its tick") {
  // Batches of 2 records, 1 credit per consumer; handlers take no time on
  // the scripted clock, so the time between them is idle or backpressured.
  scripted_clock t;
  fixture f{deployment({vertex("id", "map", {{"function", "identity"}})}, {1},
                       1),
            opts(2, 1), {}, t.fn()};
  auto bytes = static_cast<int64_t>(batch_of(1, 2).byte_size());
  f.runner.start();
  CHECK(f.port.tick_due);
  f.port.mailbox = 3;
  t.ms = 10;
  f.runner.on_batch(0, 0, 0, batch_of(1, 2)); // sent at once
  t.ms = 30;
  f.runner.on_batch(0, 0, 1, batch_of(3, 4)); // no credit: it waits
  t.ms = 100;
  f.runner.on_credit(0, 0, 1);
  CHECK(f.port.metrics == 0);
  t.ms = 250;
  f.port.tick_due = false;
  f.runner.metrics_tick();
  REQUIRE(f.port.metrics == 1);
  auto a = f.port.last_metrics.load;
  CHECK(a.bytes_in == 2 * bytes);
  CHECK(a.bytes_out == 2 * bytes);
  CHECK(a.busy_ms == 0);
  CHECK(a.idle_ms == 180);
  CHECK(a.backpressured_ms == 70);
  CHECK(a.records_in_per_s == 16.0);
  CHECK(a.records_out_per_s == 16.0);
  CHECK(a.bytes_out_per_s == 8.0 * bytes);
  CHECK(a.idle_ms_per_s == 720.0);
  CHECK(a.backpressured_ms_per_s == 280.0);
  CHECK(a.input_queue == 3);
  CHECK(a.output_queue == 0);

  CHECK(f.port.tick_due); // active: the tick comes again
  f.port.mailbox = 0;
  t.ms = 260;
  f.runner.on_batch(0, 0, 2, batch_of(5, 6)); // waits for credit
  t.ms = 500;
  f.port.tick_due = false;
  f.runner.metrics_tick();
  REQUIRE(f.port.metrics == 2);
  auto b = f.port.last_metrics.load;
  CHECK(b.output_queue == 1);
  CHECK(b.idle_ms == 190);
  CHECK(b.backpressured_ms == 310);
  CHECK(b.backpressured_ms_per_s == 960.0);
  CHECK(b.idle_ms_per_s == 40.0);
  CHECK(b.records_in_per_s == 8.0);
  CHECK(b.records_out_per_s == 8.0); // emitted, though not sent yet

  CHECK(f.port.tick_due);
  t.ms = 700; // nothing happened since: one last report, no more ticks
  f.port.tick_due = false;
  f.runner.metrics_tick();
  REQUIRE(f.port.metrics == 3);
  CHECK(f.port.last_metrics.load.backpressured_ms_per_s == 1000.0);
  CHECK(f.port.last_metrics.load.busy_ms + f.port.last_metrics.load.idle_ms
          + f.port.last_metrics.load.backpressured_ms
        == 700);
  CHECK_FALSE(f.port.tick_due);
}

} // TEST_SUITE

// -- event time (docs/event-time.md) ------------------------------------------

/// `v` stamping event times from `field` (out-of-orderness `delay_ms`; the
/// watermark goes out after every batch that advances it).
vertex_spec with_watermarks(vertex_spec v, std::string field,
                            int64_t delay_ms = 0) {
  v.watermarks.field = std::move(field);
  v.watermarks.max_out_of_orderness_ms = delay_ms;
  v.watermarks.interval_ms = 0;
  return v;
}

TEST_CASE("a source with watermarks sends one after each batch that "
          "advances it, and the highest at its end") {
  fixture f{deployment({with_watermarks(vertex("src", "sequence",
                                               {{"from", "1"}, {"to", "5"}}),
                                        "value", 1)},
                       {}, 1),
            opts(2)};
  f.runner.start();
  f.port.take();
  f.run_source();
  // Rows 1-2: largest 2, less 1 ms of out-of-orderness, less 1 ms.
  CHECK(f.port.take()
        == log_lines{"batch g0 c0 ch0 #0 [1,2]", "watermark g0 c0 ch0 #1 0",
                     "batch g0 c0 ch0 #2 [3,4]", "watermark g0 c0 ch0 #3 2",
                     "batch g0 c0 ch0 #4 [5]",
                     fmt::format("watermark g0 c0 ch0 #5 {}", end_watermark),
                     "end g0 c0 ch0 after 6", "FINISHED in=5 out=5"});
}

TEST_CASE("a subtask's watermark is the least of its channels', idle ones "
          "left out, and goes on to its consumers") {
  fixture f{deployment({vertex("pass", "map", {{"select", "value"}})}, {2}, 1)};
  f.runner.start();
  f.port.take();
  f.runner.on_watermark(0, 0, 0, watermark_mark{10, false});
  CHECK(f.port.take() == log_lines{"credit ch0 p0"}); // channel 1 holds it
  f.runner.on_watermark(1, 0, 0, watermark_mark{7, false});
  CHECK(f.port.take()
        == log_lines{"watermark g0 c0 ch0 #0 7", "credit ch1 p0"});
  f.runner.on_watermark(1, 0, 1, watermark_mark{0, true}); // 1 idles
  CHECK(f.port.take()
        == log_lines{"watermark g0 c0 ch0 #1 10", "credit ch1 p0"});
  f.runner.on_watermark(0, 0, 1, watermark_mark{0, true}); // both idle
  CHECK(f.port.take()
        == log_lines{"watermark g0 c0 ch0 #2 10 idle", "credit ch0 p0"});
  // Channel 1 comes back below the watermark: active again, holding
  // nothing back until it catches up.
  f.runner.on_watermark(1, 0, 2, watermark_mark{8, false});
  CHECK(f.port.take()
        == log_lines{"watermark g0 c0 ch0 #3 10", "credit ch1 p0"});
  f.runner.on_watermark(1, 0, 3, watermark_mark{12, false});
  CHECK(f.port.take()
        == log_lines{"watermark g0 c0 ch0 #4 12", "credit ch1 p0"});
  f.runner.on_end(1, 4); // the idle channel 0 is all that is left
  CHECK(f.port.take() == log_lines{"watermark g0 c0 ch0 #5 12 idle"});
  f.runner.on_end(0, 2);
  CHECK(f.port.take()
        == log_lines{fmt::format("watermark g0 c0 ch0 #6 {}", end_watermark),
                     "end g0 c0 ch0 after 7", "FINISHED in=0 out=0"});
}

TEST_CASE("a job without watermarks sends none, also at its end") {
  fixture f{deployment({vertex("pass", "map", {{"select", "value"}})}, {1}, 1)};
  f.runner.start();
  f.port.take();
  f.runner.on_batch(0, 0, 0, batch_of(1, 2));
  f.runner.on_end(0, 1);
  f.port.flush_due = false;
  CHECK(f.port.take()
        == log_lines{"credit ch0 p0", "batch g0 c0 ch0 #0 [1,2]",
                     "end g0 c0 ch0 after 1", "FINISHED in=2 out=2"});
}

TEST_CASE("the event time a vertex with watermarks reached is in its "
          "checkpoint: restored, its watermark does not go back") {
  auto d = deployment({with_watermarks(vertex("src", "sequence",
                                              {{"from", "1"}, {"to", "100"}}),
                                       "value", 10)},
                      {}, 1);
  operator_chain first{d, opts(50)};
  first.open();
  CHECK(first.generated_watermark() == no_watermark);
  first.run_source(); // rows 1..50
  CHECK(first.generated_watermark() == 39);
  auto snap = first.snapshot(1, state::snapshot_kind::checkpoint);
  REQUIRE(snap.ready.count("src") == 1);
  auto decoded = state::decode_vertex_snapshot(snap.ready.at("src"));
  REQUIRE(decoded);
  CHECK(decoded->max_event_time == 50);

  operator_chain again{d, opts(50)};
  again.open(snap.ready);
  CHECK(again.generated_watermark() == 39);
}
