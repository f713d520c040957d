// The data plane: output_gate, input_queue, barrier_aligner.
#include <doctest/doctest.h>

#include <csignal>
#include <string>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dataplane/crash_note.hpp"
#include "dataplane/input_credits.hpp"
#include "dataplane/network_buffers.hpp"
#include "tests/unit/runtime_fixtures.hpp"

using namespace weir;
using namespace weir::test;

namespace {

const schema nums_schema = default_schema::numbers();
const schema keyed_schema = default_schema::keyed_numbers();

} // namespace

// -- output_gate --------------------------------------------------------------

TEST_SUITE("output_gate") {

TEST_CASE("a new gate is empty") {
  output_gate gate{desc(partitioning::hash, 3, 5), 2, exchange_options{},
                   keyed_schema};
  CHECK(gate.empty());
  CHECK_FALSE(gate.has_open_data());
  CHECK_FALSE(gate.backlogged());
  CHECK(gate.channel() == 7);
  CHECK(gate.targets() == std::vector<int32_t>{0, 1, 2});
  CHECK(drain(gate).empty());
  gate.flush();
  CHECK(drain(gate).empty());
  CHECK(gate.empty());
}

TEST_CASE("forward sends everything to the consumer with the producer's "
          "index") {
  output_gate gate{desc(partitioning::forward, 3, 2), 1, opts(100), nums_schema};
  CHECK(gate.targets() == std::vector<int32_t>{1});
  CHECK(gate.channel() == 2);
  auto in = numbers(1, 5);
  gate.emit(in);
  CHECK(gate.has_open_data());
  CHECK_FALSE(gate.backlogged());
  CHECK(drain(gate).empty()); // the batch is still open
  gate.flush();
  CHECK_FALSE(gate.has_open_data());
  CHECK(gate.backlogged());
  auto out = drain(gate);
  REQUIRE(out.size() == 1u);
  CHECK(out[0].consumer == 1);
  CHECK(out[0].channel == 2);
  CHECK(out[0].rows == numbers(1, 5));
  CHECK(gate.empty());
}

TEST_CASE("hash sends each key to one consumer, the same from every "
          "producer and every batch") {
  constexpr int32_t consumers = 4;
  output_gate p0{desc(partitioning::hash, consumers), 0, opts(3), keyed_schema};
  output_gate p1{desc(partitioning::hash, consumers), 1, opts(3), keyed_schema};
  CHECK(p0.channel() == 0);
  CHECK(p1.channel() == 1);
  std::vector<std::string> keys;
  for (int i = 0; i < 40; ++i)
    keys.push_back("key-" + std::to_string(i));
  for (int round = 0; round < 3; ++round) {
    std::vector<record> a;
    std::vector<record> b;
    for (auto& k : keys) {
      a.push_back(record::integer(k, round));
      b.push_back(record::integer(k, round));
    }
    p0.emit(to_rows(a));
    p1.emit(to_rows(b));
  }
  p0.flush();
  p1.flush();
  std::map<std::string, std::set<int32_t>> seen;
  std::map<std::string, int> copies;
  std::set<int32_t> used;
  for (auto* gate : {&p0, &p1}) {
    for (auto& batch : drain(*gate)) {
      CHECK(batch.channel == gate->channel());
      for (auto& r : batch.records) {
        seen[r.key].insert(batch.consumer);
        ++copies[r.key];
        used.insert(batch.consumer);
        CHECK(batch.consumer == hash_target(r.key, consumers));
      }
    }
  }
  CHECK(seen.size() == keys.size());
  for (auto& [key, targets] : seen) {
    CAPTURE(key);
    CHECK(targets.size() == 1u);
    CHECK(copies[key] == 6);
  }
  // Forty keys spread over all four consumers.
  CHECK(used.size() == 4u);
}

TEST_CASE("a wide gate opens a lane's batch only when rows come for it") {
  // 200 lanes of 128 KiB batches: more than the 8 MiB a gate opens ahead.
  constexpr int32_t consumers = 200;
  output_gate gate{desc(partitioning::hash, consumers), 0, opts(1000),
                   keyed_schema};
  for (int round = 0; round < 2; ++round) {
    std::vector<record> rows;
    for (int i = 0; i < 30; ++i)
      rows.push_back(record::integer("key-" + std::to_string(i), round));
    gate.emit(to_rows(rows));
    gate.flush();
    std::map<std::string, int> seen;
    std::set<int32_t> targets;
    auto batches = drain(gate);
    for (auto& batch : batches) {
      targets.insert(batch.consumer);
      for (auto& r : batch.records) {
        CHECK(batch.consumer == hash_target(r.key, consumers));
        CHECK(r.num == round);
        ++seen[r.key];
      }
    }
    // Every row once, in one batch per lane that got rows; none empty.
    CHECK(seen.size() == 30u);
    for (auto& [key, n] : seen)
      CHECK(n == 1);
    CHECK(batches.size() == targets.size());
  }
  CHECK(gate.empty());
}

TEST_CASE("broadcast sends every record to every consumer") {
  // One schema for all rows (before rows, one batch mixed text and int64
  // values): keyed text rows, one without a key, one with an event time.
  output_gate gate{desc(partitioning::broadcast, 3), 1, opts(100),
                   default_schema::keyed_lines()};
  CHECK(gate.channel() == 1);
  auto in = std::vector<record>{record::string("k", "x"),
                                record::string("", "2"),
                                record::string("", "y", 9)};
  auto expected = in;
  gate.emit(to_rows(default_schema::keyed_lines(), in));
  gate.flush();
  auto out = drain(gate);
  REQUIRE(out.size() == 3u);
  std::set<int32_t> consumers;
  for (auto& b : out) {
    consumers.insert(b.consumer);
    CHECK(b.channel == 1);
    CHECK(b.records == expected);
  }
  CHECK(consumers == std::set<int32_t>{0, 1, 2});
}

TEST_CASE("rebalance spreads each batch in slices, round-robin from the "
          "producer's index") {
  output_gate gate{desc(partitioning::rebalance, 3), 1, opts(100), nums_schema};
  auto in = numbers(0, 6); // 7 rows: 3, 2, 2 from consumer 1 on
  gate.emit(in);
  auto more = numbers(7, 8); // the extra rows go on from consumer 2
  gate.emit(more);
  gate.flush();
  auto got = nums_by_consumer(drain(gate));
  CHECK(got[1] == std::vector<int64_t>{0, 1, 2});
  CHECK(got[2] == std::vector<int64_t>{3, 4, 7});
  CHECK(got[0] == std::vector<int64_t>{5, 6, 8});
}

TEST_CASE("rebalance from several producers spreads evenly") {
  constexpr int32_t consumers = 4;
  std::map<int32_t, size_t> load;
  for (int32_t p = 0; p < 3; ++p) {
    output_gate gate{desc(partitioning::rebalance, consumers), p, opts(1000),
                     nums_schema};
    auto in = numbers(1, 2); // few records per producer
    gate.emit(in);
    gate.flush();
    for (auto& b : drain(gate))
      load[b.consumer] += b.records.size();
  }
  // Six records from three producers land on four consumers, at most two
  // each (producers start at different consumers).
  size_t total = 0;
  for (auto& [consumer, n] : load) {
    CAPTURE(consumer);
    CHECK(n <= 2u);
    total += n;
  }
  CHECK(total == 6u);
  CHECK(load.size() == 4u);
}

TEST_CASE("a batch closes at batch_records") {
  output_gate gate{desc(partitioning::forward, 1), 0, opts(3), nums_schema};
  auto in = numbers(1, 7);
  gate.emit(in);
  CHECK(gate.backlogged());
  CHECK(gate.has_open_data());
  auto out = drain(gate);
  CHECK(sizes(out) == std::vector<size_t>{3, 3});
  CHECK(out[0].rows == numbers(1, 3));
  CHECK(out[1].rows == numbers(4, 6));
  CHECK_FALSE(gate.backlogged());
  CHECK(gate.has_open_data());
  CHECK_FALSE(gate.empty());
  gate.flush();
  out = drain(gate);
  CHECK(sizes(out) == std::vector<size_t>{1});
  CHECK(out[0].rows == numbers(7, 7));
  CHECK(gate.empty());
  // An exact multiple leaves nothing open.
  auto six = numbers(1, 6);
  gate.emit(six);
  CHECK_FALSE(gate.has_open_data());
  CHECK(sizes(drain(gate)) == std::vector<size_t>{3, 3});
  CHECK(gate.empty());
}

TEST_CASE("one large emit is cut into batches of batch_records, keeping "
          "strings, nulls and event times") {
  // An aggregation's final rows or a flat_map's words arrive in one emit.
  auto s = parse_schema("key: string, value: int64?").value;
  row_batch in{s};
  for (int64_t i = 0; i < 50; ++i) {
    in.columns[0].push_str("k" + std::to_string(i % 7));
    if (i % 5 == 0)
      in.columns[1].push_null();
    else
      in.columns[1].push_int(i);
    ++in.rows;
    in.push_time(1000 + i);
  }
  output_gate gate{desc(partitioning::hash, 2), 0, opts(3), s};
  gate.emit(in);
  gate.flush();
  std::map<int32_t, row_batch> got;
  for (auto& b : drain(gate)) {
    CHECK(b.rows.rows <= 3u);
    got.try_emplace(b.consumer, s);
    got.at(b.consumer).append(b.rows);
  }
  std::map<int32_t, row_batch> want;
  for (size_t i = 0; i < in.rows; ++i) {
    auto key = std::string{in.columns[0].str(i)};
    want.try_emplace(hash_target(key, 2), s);
    want.at(hash_target(key, 2)).push_row(in, i);
  }
  CHECK(got == want);
}

TEST_CASE("a batch closes at batch_bytes") {
  // Each record is about 200 bytes: a 500-byte batch closes at the third.
  output_gate gate{desc(partitioning::forward, 1), 0, opts(1000, 1000, 500),
                   default_schema::lines()};
  std::vector<record> in;
  for (int i = 0; i < 7; ++i)
    in.push_back(record::string("", std::string(200, 'x')));
  gate.emit(to_rows(in));
  CHECK(sizes(drain(gate)) == std::vector<size_t>{3, 3});
  gate.flush();
  CHECK(sizes(drain(gate)) == std::vector<size_t>{1});
}

TEST_CASE("one large emit is cut where rows of any size reach batch_bytes") {
  // Lines of 10, 20, ... 400 bytes; each counts its length and a 4-byte
  // offset. A batch closes with the line that reaches 300 bytes.
  std::vector<record> in;
  std::vector<size_t> want;
  size_t rows = 0;
  size_t bytes = 0;
  for (size_t i = 1; i <= 40; ++i) {
    in.push_back(record::string("", std::string(i * 10, 'x')));
    ++rows;
    bytes += i * 10 + 4;
    if (bytes >= 300) {
      want.push_back(rows);
      rows = 0;
      bytes = 0;
    }
  }
  if (rows > 0)
    want.push_back(rows);
  output_gate gate{desc(partitioning::forward, 1), 0, opts(1000, 1000, 300),
                   default_schema::lines()};
  gate.emit(to_rows(in));
  gate.flush();
  auto out = drain(gate);
  CHECK(sizes(out) == want);
  std::vector<record> all;
  for (auto& b : out)
    all.insert(all.end(), b.records.begin(), b.records.end());
  CHECK(all == in);
}

TEST_CASE("credits limit what drain sends; add_credit releases the rest") {
  output_gate gate{desc(partitioning::forward, 2), 1, opts(2, 2), nums_schema};
  auto in = numbers(1, 10);
  gate.emit(in);
  CHECK(gate.backlogged());
  auto out = drain(gate);
  REQUIRE(out.size() == 2u);
  CHECK(out[0].rows == numbers(1, 2));
  CHECK(out[1].rows == numbers(3, 4));
  CHECK(gate.backlogged());
  CHECK(drain(gate).empty()); // no credit left
  gate.add_credit(0, 5);      // not a target of this producer
  CHECK(drain(gate).empty());
  gate.add_credit(7, 5);      // no such consumer: ignored
  CHECK(drain(gate).empty());
  gate.add_credit(1, 1);
  out = drain(gate);
  REQUIRE(out.size() == 1u);
  CHECK(out[0].rows == numbers(5, 6));
  gate.add_credit(1, 5);
  out = drain(gate);
  REQUIRE(out.size() == 2u);
  CHECK(out[0].rows == numbers(7, 8));
  CHECK(out[1].rows == numbers(9, 10));
  CHECK_FALSE(gate.backlogged());
  CHECK(gate.empty());
  // The three unused credits carry over.
  auto again = numbers(11, 16);
  gate.emit(again);
  CHECK(sizes(drain(gate)) == std::vector<size_t>{2, 2, 2});
  CHECK(gate.empty());
}

TEST_CASE("credit is per consumer: one blocked consumer does not stall "
          "another") {
  output_gate gate{desc(partitioning::rebalance, 2), 0, opts(1, 1), nums_schema};
  auto in = numbers(0, 5); // 0,1,2 to consumer 0; 3,4,5 to consumer 1
  gate.emit(in);
  auto first = nums_by_consumer(drain(gate));
  CHECK(first[0] == std::vector<int64_t>{0});
  CHECK(first[1] == std::vector<int64_t>{3});
  gate.add_credit(1, 2);
  auto second = nums_by_consumer(drain(gate));
  CHECK(second.count(0) == 0u);
  CHECK(second[1] == std::vector<int64_t>{4, 5});
  CHECK(gate.backlogged());
  gate.add_credit(0, 2);
  auto third = nums_by_consumer(drain(gate));
  CHECK(third[0] == std::vector<int64_t>{1, 2});
  CHECK(gate.empty());
}

TEST_CASE("flush closes partial batches on every lane") {
  output_gate gate{desc(partitioning::hash, 3), 0, opts(1000), keyed_schema};
  std::vector<record> in;
  for (int i = 0; i < 30; ++i)
    in.push_back(record::integer("k" + std::to_string(i), i));
  gate.emit(to_rows(in));
  CHECK(drain(gate).empty());
  CHECK(gate.has_open_data());
  gate.flush();
  CHECK_FALSE(gate.has_open_data());
  auto out = drain(gate);
  size_t total = 0;
  for (auto& b : out)
    total += b.records.size();
  CHECK(total == 30u);
  CHECK(gate.empty());
  gate.flush(); // nothing open: no empty batches
  CHECK(drain(gate).empty());
}

TEST_CASE("a counting combiner sends one partial count per key") {
  output_gate gate{desc(partitioning::hash, 2, 0, "count"), 0, opts(1000),
                   keyed_schema};
  std::vector<record> in{record::integer("a", 5, 10), record::integer("b", 7, 1),
                         record::integer("a", 9, 30)};
  gate.emit(to_rows(in));
  std::vector<record> more{record::integer("c", 1, 2), record::integer("a", 0, 20),
                           record::integer("b", 3, 4)};
  gate.emit(to_rows(more));
  CHECK(gate.has_open_data());
  CHECK_FALSE(gate.empty());
  CHECK_FALSE(gate.backlogged());
  CHECK(drain(gate).empty()); // held in the combiner until flush
  gate.flush();
  std::map<std::string, record> got;
  for (auto& b : drain(gate)) {
    for (auto& r : b.records) {
      CAPTURE(r.key);
      CHECK(b.consumer == hash_target(r.key, 2));
      CHECK(got.count(r.key) == 0u);
      got[r.key] = r;
    }
  }
  REQUIRE(got.size() == 3u);
  CHECK(got["a"] == record::integer("a", 3, 30));
  CHECK(got["b"] == record::integer("b", 2, 4));
  CHECK(got["c"] == record::integer("c", 1, 2));
  CHECK(gate.empty());
}

TEST_CASE("combiners: the consumer's aggregate equals that of the raw "
          "records") {
  for (std::string kind : {"count", "sum", "min", "max"}) {
    CAPTURE(kind);
    auto agg_kind = *ops::parse_aggregation_kind(kind);
    // Raw records: key "k<i mod 7>", value (i * 37) mod 101 - 50.
    std::vector<record> raw;
    for (int64_t i = 0; i < 500; ++i)
      raw.push_back(record::integer("k" + std::to_string(i % 7),
                                    (i * 37) % 101 - 50, i));
    ops::keyed_aggregation expected{agg_kind, {}, keyed_schema, {0}};
    expected.add(to_rows(raw), false);
    auto want = drained_sorted(expected);

    // Two producers with small combiners, so partials are drained mid-way.
    exchange_options o = opts(4);
    o.combiner_keys = 3;
    ops::keyed_aggregation consumer{agg_kind, {}, keyed_schema, {0}};
    for (int32_t p = 0; p < 2; ++p) {
      output_gate gate{desc(partitioning::hash, 2, 0, kind), p, o, keyed_schema};
      for (size_t at = static_cast<size_t>(p) * 10; at < raw.size(); at += 20) {
        std::vector<record> chunk(
          raw.begin() + static_cast<std::ptrdiff_t>(at),
          raw.begin()
            + static_cast<std::ptrdiff_t>(std::min(at + 10, raw.size())));
        gate.emit(to_rows(chunk));
      }
      gate.flush();
      for (auto& b : drain(gate))
        consumer.add(b.rows, true);
      CHECK(gate.empty());
    }
    CHECK(drained_sorted(consumer) == want);
  }
}

TEST_CASE("a combiner holding combiner_keys keys drains without a flush") {
  exchange_options o = opts(1);
  o.combiner_keys = 3;
  output_gate gate{desc(partitioning::hash, 1, 0, "sum"), 0, o, keyed_schema};
  std::vector<record> two{record::integer("a", 1), record::integer("b", 2),
                          record::integer("a", 3)};
  gate.emit(to_rows(two));
  CHECK(drain(gate).empty()); // two keys: still combining
  CHECK(gate.has_open_data());
  std::vector<record> third{record::integer("c", 4)};
  gate.emit(to_rows(third));
  auto out = drain(gate);
  std::map<std::string, int64_t> sums;
  for (auto& b : out)
    for (auto& r : b.records)
      sums[r.key] = r.num;
  CHECK(sums == std::map<std::string, int64_t>{{"a", 4}, {"b", 2}, {"c", 4}});
  CHECK(gate.empty());
}

TEST_CASE("a gate moves with its buffered records") {
  output_gate gate{desc(partitioning::forward, 1), 0, opts(100), nums_schema};
  auto in = numbers(1, 3);
  gate.emit(in);
  output_gate moved{std::move(gate)};
  CHECK(moved.has_open_data());
  moved.flush();
  auto out = drain(moved);
  REQUIRE(out.size() == 1u);
  CHECK(out[0].rows == numbers(1, 3));
}

} // TEST_SUITE

TEST_SUITE("input_queue") {

TEST_CASE("events leave in channel order and the last open channel ends input") {
  weir::input_queue q{3};
  CHECK(q.open_channels() == 3);
  q.push_end(2, 0);
  q.push(0, weir::input_event{0, 1, numbers({5})});
  auto first = q.pop();
  CHECK(is_end(first));
  CHECK(first.channel == 2);
  auto second = q.pop();
  CHECK_FALSE(is_end(second));
  CHECK(second.port == 1);
  CHECK(records_of(second).size() == 1);
  CHECK(q.empty());
  CHECK_FALSE(q.end_channel(2));
  CHECK_FALSE(q.end_channel(2)); // repeated: ignored
  CHECK_FALSE(q.end_channel(7)); // unknown: ignored
  CHECK_FALSE(q.end_channel(-1));
  CHECK(q.open_channels() == 2);
  CHECK_FALSE(q.end_channel(0));
  CHECK(q.end_channel(1));
  CHECK(q.open_channels() == 0);
}

TEST_CASE("batches and ends that overtook earlier ones wait for them") {
  weir::input_queue q{2};
  auto batch = [](int32_t channel, int64_t value) {
    return weir::input_event{channel, 0, numbers({value})};
  };
  q.push_end(0, 3);          // the end came first
  q.push(2, batch(0, 102));
  q.push(1, batch(1, 201)); // other channel: waits for its batch 0
  CHECK(q.empty());
  q.push(0, batch(0, 100));
  q.push(0, batch(0, 100)); // a duplicate: dropped
  auto a = q.pop();
  CHECK(records_of(a)[0].num == 100);
  CHECK(q.empty()); // batch 1 of channel 0 is still missing
  q.push(1, batch(0, 101));
  CHECK(records_of(q.pop())[0].num == 101);
  CHECK(records_of(q.pop())[0].num == 102);
  auto end = q.pop();
  CHECK(is_end(end));
  CHECK(end.channel == 0);
  CHECK(q.empty());
  q.push(0, batch(1, 200));
  CHECK(records_of(q.pop())[0].num == 200);
  CHECK(records_of(q.pop())[0].num == 201);
  q.push(0, batch(5, 1)); // an unknown channel: dropped
  CHECK(q.empty());
}

TEST_CASE("a barrier keeps its place among the batches of its channel") {
  weir::input_queue q{1};
  auto batch = weir::input_event{0, 0, numbers(1, 1)};
  q.push(2, batch);
  q.push(1, weir::input_event{0, 0, checkpoint_barrier{9, checkpoint_kind::full_checkpoint}});
  q.push_end(0, 3);
  CHECK(q.empty()); // event 0 is missing
  q.push(0, batch);
  CHECK_FALSE(records_of(q.pop()).empty());
  auto barrier = q.pop();
  REQUIRE(std::holds_alternative<checkpoint_barrier>(barrier.body));
  CHECK(std::get<checkpoint_barrier>(barrier.body)
        == checkpoint_barrier{9, checkpoint_kind::full_checkpoint});
  CHECK_FALSE(records_of(q.pop()).empty());
  CHECK(is_end(q.pop()));
  CHECK(q.empty());
}

TEST_CASE("withheld credits are released once, all together") {
  weir::input_queue q{1};
  q.withhold(weir::owed_credit{{}, 0});
  q.withhold(weir::owed_credit{{}, 3});
  auto released = q.release();
  REQUIRE(released.size() == 2);
  CHECK(released[1].port == 3);
  CHECK(q.release().empty());
}

} // TEST_SUITE

// -- checkpoint barriers ----------------------------------------------------------

namespace {

input_event data_on(int32_t channel, int64_t value) {
  input_event ev;
  ev.channel = channel;
  ev.body = numbers({value});
  return ev;
}

} // namespace

TEST_CASE("barriers align: a channel past the barrier waits for the others") {
  barrier_aligner a{3};
  CHECK_FALSE(a.blocked(0));
  CHECK_FALSE(a.on_barrier(0, 7));
  CHECK(a.pending() == 7);
  CHECK(a.blocked(0));
  CHECK_FALSE(a.blocked(1));
  a.hold(data_on(0, 1)); // after the barrier on channel 0
  a.hold(data_on(0, 2));
  CHECK_FALSE(a.on_barrier(2, 7));
  CHECK(a.on_barrier(1, 7)); // the last open channel: aligned
  auto held = a.release();
  REQUIRE(held.size() == 2);
  CHECK(records_of(held[0])[0].num == 1);
  CHECK(records_of(held[1])[0].num == 2);
  CHECK_FALSE(a.blocked(0));
  CHECK_FALSE(a.pending());
}

TEST_CASE("an ended channel does not hold an alignment back") {
  barrier_aligner a{2};
  CHECK_FALSE(a.on_end(1)); // nothing pending
  CHECK(a.on_barrier(0, 1)); // channel 1 has ended: aligned at once
  a.release();
  barrier_aligner b{2};
  CHECK_FALSE(b.on_barrier(0, 4));
  CHECK(b.on_end(1)); // the other channel ends while 0 waits
}

TEST_CASE("a newer barrier abandons an older alignment") {
  barrier_aligner a{2};
  CHECK_FALSE(a.on_barrier(0, 1));
  CHECK_FALSE(a.on_barrier(1, 2)); // checkpoint 1 was abandoned
  CHECK(a.pending() == 2);
  CHECK_FALSE(a.on_barrier(1, 1)); // a late barrier of the old one: ignored
  CHECK(a.on_barrier(0, 2));
}

TEST_CASE("a barrier leaves after the data emitted before it, on every lane") {
  output_desc desc;
  desc.part = partitioning::rebalance;
  desc.consumers = 2;
  exchange_options o;
  o.initial_credit = 2;
  output_gate gate{desc, 0, o, nums_schema};
  gate.emit(numbers({1, 2, 3}));
  gate.emit_barrier(checkpoint_barrier{5, checkpoint_kind::savepoint});
  auto sent = drain(gate);
  REQUIRE(sent.size() == 4); // one data batch and one barrier per lane
  for (auto& s : sent) {
    bool barrier = s.barrier == 5;
    CHECK(barrier == s.records.empty());
    CHECK(s.seq == (barrier ? 1 : 0));
  }
}


// -- network buffers ----------------------------------------------------------

TEST_CASE("a subtask needs exclusive and floating buffers per input gate "
          "and one per output channel") {
  network_buffer_options opts; // 2 per input channel, 8 per gate, max 64
  task_deployment d;
  // A wide gate: its channels' exclusive buffers would pass 64, so it has
  // only floating ones.
  d.inputs = {input_gate_desc{32768, false}, input_gate_desc{3, false}};
  d.outputs = {desc(partitioning::hash, 32768), desc(partitioning::forward, 32768)};
  CHECK(buffers_needed(d, opts) == 8 + (2 * 3 + 8) + 32768 + 1);
  CHECK(opts.total_buffers() == 32768); // 1 GiB of 32 KiB buffers
}

// -- input credits ---------------------------------------------------------------

using grants = std::vector<input_credits::grant>;

TEST_CASE("a channel gets its exclusive credits at its first backlog, and "
          "floating ones while its producer has more waiting") {
  input_credits c{{{2, 2, 3}}}; // 2 channels, 2 exclusive each, 3 floating
  grants out;
  c.on_backlog(0, 5, 4, out);
  CHECK(out == grants{{0, 5, 4}}); // 2 exclusive, 2 lent
  CHECK(c.lent(0) == 2);
  CHECK(c.free_in_gate_of(0) == 1);
  out.clear();
  CHECK_FALSE(c.consume(0, out)); // a lent credit goes back to the pool
  CHECK_FALSE(c.consume(0, out));
  CHECK(c.free_in_gate_of(0) == 3);
  CHECK(c.consume(0, out)); // an exclusive one to the producer
  CHECK(out.empty());
  c.on_backlog(0, 5, 1, out); // the exclusive credits are given once
  CHECK(out == grants{{0, 5, 1}});
}

TEST_CASE("a wide gate lends its floating credits round-robin to the "
          "channels with a backlog") {
  input_credits c{{{3, 0, 2}}}; // no exclusive credits, 2 floating
  grants out;
  c.on_backlog(0, 0, 5, out);
  CHECK(out == grants{{0, 0, 2}});
  out.clear();
  c.on_backlog(1, 0, 1, out); // waits: nothing is free
  CHECK(out.empty());
  CHECK_FALSE(c.consume(0, out));
  CHECK(out == grants{{0, 0, 1}}); // 0 asked first: its turn, then 1's
  out.clear();
  CHECK_FALSE(c.consume(0, out));
  CHECK(out == grants{{1, 0, 1}});
}

TEST_CASE("during an alignment a blocked channel's lent credits go back and "
          "it is lent nothing, so the others get their barriers through") {
  input_credits c{{{2, 0, 1}}}; // one floating credit for two channels
  grants out;
  c.on_backlog(0, 0, 3, out);
  CHECK(out == grants{{0, 0, 1}});
  out.clear();
  c.on_backlog(1, 0, 1, out); // channel 1 still owes its barrier
  CHECK(out.empty());
  // Channel 0 delivered its barrier; its next event waits unprocessed.
  CHECK(c.hold(0, out));
  CHECK(out == grants{{1, 0, 1}}); // the credit went on to channel 1
  out.clear();
  CHECK(c.consume(1, out) == false);
  CHECK(out.empty()); // channel 0 is blocked: the credit stays in the pool
  c.unblock_all(out);
  CHECK(out == grants{{0, 0, 1}}); // channel 0 still has events waiting
}

TEST_CASE("the buffer pool refuses what exceeds it and frees per slot") {
  network_buffer_pool pool{100};
  auto a = allocation_id::random();
  auto b = allocation_id::random();
  CHECK(pool.reserve(a, 60));
  CHECK_FALSE(pool.reserve(b, 41));
  CHECK(pool.available() == 40);
  CHECK(pool.reserve(b, 40));
  CHECK(pool.available() == 0);
  pool.release(a);
  pool.release(a); // once only
  CHECK(pool.available() == 60);
}

TEST_CASE("a forward gate keeps one lane, whatever the consumers' count") {
  output_gate gate{desc(partitioning::forward, 100000), 99999, opts(2, 1),
                   nums_schema};
  auto in = numbers(1, 4);
  gate.emit(in);
  auto out = drain(gate);
  REQUIRE(out.size() == 1u);
  CHECK(gate.sent(99999) == 1);
  gate.add_credit(99999, 1);
  CHECK(drain(gate).size() == 1u);
}

// -- crash notes ----------------------------------------------------------------

namespace {

/// Runs `crash` in a child process with the crash handler installed; returns
/// the note it wrote (acknowledged at once) and the signal that ended it.
template <class F>
std::pair<std::string, int> crash_in_child(F crash) {
  int notes[2];
  int acks[2];
  REQUIRE(::pipe(notes) == 0);
  REQUIRE(::pipe(acks) == 0);
  auto pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(notes[0]);
    ::close(acks[1]);
    ::dup2(::open("/dev/null", O_WRONLY), STDERR_FILENO); // its "weir: ..." line
    install_crash_handler(notes[1], acks[0], 10000);
    crash();
    ::_exit(0);
  }
  ::close(notes[1]);
  ::close(acks[0]);
  std::string note;
  char c;
  while (::read(notes[0], &c, 1) == 1) {
    note += c;
    if (c == '\n') {
      ::write(acks[1], "k", 1); // the child may die now
    }
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(notes[0]);
  ::close(acks[1]);
  return {note, WIFSIGNALED(status) ? WTERMSIG(status) : 0};
}

} // namespace

TEST_CASE("crash notes: user code that crashes leaves its note, then the "
          "signal ends the process") {
  auto [note, sig] = crash_in_child([] {
    crash_scope outer{"a1\toperator 'x' (vertex 'v', subtask 1/1)"};
    crash_scope inner{"a2\toperator 'segv' (vertex 'b', subtask 2/2)"};
    std::raise(SIGSEGV);
  });
  CHECK(note == "a2\toperator 'segv' (vertex 'b', subtask 2/2)\t11\n");
  CHECK(sig == SIGSEGV);
  // Outside user code (the scope ended): no note, the default action.
  auto [none, abrt] = crash_in_child([] {
    { crash_scope done{"a3\toperator 'y' (vertex 'w', subtask 1/1)"}; }
    std::abort();
  });
  CHECK(none.empty());
  CHECK(abrt == SIGABRT);
}
