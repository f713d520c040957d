#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <xxhash.h>

#include "actors/job_master/execution_graph.hpp"
#include "actors/resource_manager/slot_manager.hpp"
#include "dataplane/barrier_aligner.hpp"
#include "dataplane/input_queue.hpp"
#include "dataplane/output_gate.hpp"
#include "actors/task_executor/slot_table.hpp"
#include "messages/deployment.hpp"
#include "messages/job_graph.hpp"
#include "messages/slots.hpp"
#include "messages/states.hpp"
#include "operators/aggregation.hpp"

using namespace weir;

namespace {

// -- helpers: slots -----------------------------------------------------------

resource_id te(const char* name) {
  return resource_id{name};
}

/// A report of `n` free slots with profile `p`.
slot_report free_slots(int32_t n, resource_profile p = {}) {
  slot_report r;
  for (int32_t i = 0; i < n; ++i)
    r.slots.push_back(slot_status{i, p, {}, {}});
  return r;
}

/// Allocation ids with readable names, so that assignments print as text.
struct allocs {
  std::map<allocation_id, std::string> names;

  allocation_id make(const std::string& name) {
    auto id = allocation_id::random();
    names[id] = name;
    return id;
  }

  std::string name(const allocation_id& id) const {
    auto i = names.find(id);
    return i == names.end() ? "?" : i->second;
  }

  /// "a1->te1:0 a2->te1:1" in match order.
  std::string show(const std::vector<slot_manager::assignment>& xs) const {
    std::string out;
    for (auto& x : xs) {
      if (!out.empty())
        out += ' ';
      out += fmt::format("{}->{}:{}", name(x.alloc), x.task_executor.value,
                         x.slot_index);
    }
    return out;
  }

  std::string show(const std::vector<allocation_id>& xs) const {
    std::string out;
    for (auto& x : xs) {
      if (!out.empty())
        out += ' ';
      out += name(x);
    }
    return out;
  }
};

std::vector<slot_request> requests(std::initializer_list<allocation_id> ids,
                                   resource_profile p = {}) {
  std::vector<slot_request> out;
  for (auto& id : ids)
    out.push_back(slot_request{id, p});
  return out;
}

// -- helpers: job graphs ------------------------------------------------------

/// lines(text_file,p2) -forward-> words(flat_map,p2) -hash-> counts(count,p2)
/// -rebalance-> out(text_file,p1). The graph is never run, so the files need
/// not exist.
job_graph word_count() {
  job_graph g;
  g.id = job_id::random();
  g.name = "word count";
  g.vertices = {
    {"lines", "text_file", {{"path", "in.txt"}}, 2},
    {"words", "flat_map", {{"function", "tokenize"}}, 2},
    {"counts", "count", {}, 2},
    {"out", "text_file", {{"path", "out.txt"}}, 1},
  };
  g.edges = {
    {"lines", "words", partitioning::forward},
    {"words", "counts", partitioning::hash},
    {"counts", "out", partitioning::rebalance},
  };
  return g;
}

/// a(sequence,p3) -broadcast-> j(map,p2) <-forward- b(sequence,p2);
/// j -hash-> k(sum,p2) -rebalance-> out(collect,p1). j has two inputs, so
/// nothing chains.
job_graph two_inputs() {
  job_graph g;
  g.id = job_id::random();
  g.name = "two inputs";
  g.vertices = {
    {"a", "sequence", {{"from", "1"}, {"to", "10"}}, 3},
    {"b", "sequence", {{"from", "1"}, {"to", "10"}}, 2},
    {"j", "map", {{"function", "identity"}}, 2},
    {"k", "sum", {}, 2},
    {"out", "collect", {}, 1},
  };
  g.edges = {
    {"a", "j", partitioning::broadcast},
    {"b", "j", partitioning::forward},
    {"j", "k", partitioning::hash},
    {"k", "out", partitioning::rebalance},
  };
  return g;
}

/// src(generator) -hash-> agg(`agg_op`,p2) -forward-> sink(discard,p2).
job_graph generator_into(const std::string& agg_op,
                         std::map<std::string, std::string> gen_params,
                         partitioning part = partitioning::hash) {
  job_graph g;
  g.id = job_id::random();
  g.name = "generator";
  g.vertices = {
    {"src", "generator", std::move(gen_params), 2},
    {"agg", agg_op, {}, 2},
    {"sink", "discard", {}, 2},
  };
  g.edges = {
    {"src", "agg", part},
    {"agg", "sink", partitioning::forward},
  };
  return g;
}

std::string show(const std::vector<int32_t>& xs) {
  std::string out;
  for (auto x : xs)
    out += (out.empty() ? "" : " ") + std::to_string(x);
  return out;
}

std::string show(const std::vector<std::vector<int32_t>>& xs) {
  std::string out;
  for (auto& x : xs)
    out += "[" + show(x) + "]";
  return out;
}

std::string show(const std::vector<vertex_spec>& chain) {
  std::string out;
  for (auto& v : chain)
    out += (out.empty() ? "" : " ") + v.id;
  return out;
}

// -- helpers: output gates ----------------------------------------------------

output_desc desc(partitioning part, int32_t consumers, int32_t channel_base = 0,
                 std::string combine = {}) {
  output_desc d;
  d.part = part;
  d.consumers = consumers;
  d.channel_base = channel_base;
  d.combine = std::move(combine);
  return d;
}

exchange_options opts(size_t batch_records, int32_t initial_credit = 1000,
                      size_t batch_bytes = 1 << 30) {
  exchange_options o;
  o.batch_records = batch_records;
  o.initial_credit = initial_credit;
  o.batch_bytes = batch_bytes;
  return o;
}

std::vector<record> numbers(int64_t from, int64_t to, std::string key = {}) {
  std::vector<record> out;
  for (auto i = from; i <= to; ++i)
    out.push_back(record::integer(key, i));
  return out;
}

/// One batch as sent by drain().
struct sent_batch {
  int32_t consumer;
  int32_t channel;
  std::vector<record> records;
  int64_t seq = 0;
  int64_t barrier = -1;
};

std::vector<sent_batch> drain(output_gate& gate) {
  std::vector<sent_batch> out;
  gate.drain([&](int32_t consumer, int32_t channel, int64_t seq,
                 record_batch&& b) {
    CHECK(seq == gate.sent(consumer) - 1); // numbered 0, 1, ... per consumer
    out.push_back(
      sent_batch{consumer, channel, std::move(b.records), seq, b.barrier});
  });
  return out;
}

/// The nums of the records each consumer received, in order.
std::map<int32_t, std::vector<int64_t>>
nums_by_consumer(const std::vector<sent_batch>& batches) {
  std::map<int32_t, std::vector<int64_t>> out;
  for (auto& b : batches)
    for (auto& r : b.records)
      out[b.consumer].push_back(r.num);
  return out;
}

std::vector<size_t> sizes(const std::vector<sent_batch>& batches) {
  std::vector<size_t> out;
  for (auto& b : batches)
    out.push_back(b.records.size());
  return out;
}

int32_t hash_target(const std::string& key, int32_t consumers) {
  return static_cast<int32_t>(XXH3_64bits(key.data(), key.size())
                              % static_cast<uint64_t>(consumers));
}

} // namespace

// -- resource_profile -----------------------------------------------------------

TEST_SUITE("resource_profile") {

TEST_CASE("zero fields in a request mean any") {
  resource_profile slot{2.0, 1024, 256, 128};
  CHECK(slot.satisfies(resource_profile{}));
  CHECK(slot.satisfies(resource_profile{2.0, 1024, 256, 128}));
  CHECK(slot.satisfies(resource_profile{1.0, 0, 0, 0}));
  CHECK(slot.satisfies(resource_profile{0, 512, 0, 128}));
  CHECK_FALSE(slot.satisfies(resource_profile{2.5, 0, 0, 0}));
  CHECK_FALSE(slot.satisfies(resource_profile{0, 2048, 0, 0}));
  CHECK_FALSE(slot.satisfies(resource_profile{0, 0, 257, 0}));
  CHECK_FALSE(slot.satisfies(resource_profile{0, 0, 0, 129}));
  // An unknown (all-zero) slot satisfies only requests that ask for nothing.
  CHECK(resource_profile{}.satisfies(resource_profile{}));
  CHECK_FALSE(resource_profile{}.satisfies(resource_profile{1.0, 0, 0, 0}));
}

} // TEST_SUITE

// -- slot_manager -------------------------------------------------------------

TEST_SUITE("slot_manager") {

TEST_CASE("a new slot manager is empty") {
  slot_manager sm;
  CHECK(sm.task_executor_count() == 0);
  CHECK(sm.slot_count() == 0);
  CHECK(sm.free_slot_count() == 0);
  CHECK(sm.pending_count() == 0);
  CHECK(sm.match().empty());
  CHECK_FALSE(sm.is_registered(te("te1")));
}

TEST_CASE("requests are matched in request order, filling the first "
          "TaskExecutor first") {
  allocs ids;
  auto job = job_id::random();
  slot_manager sm;
  sm.register_task_executor(te("te1"), free_slots(2));
  sm.register_task_executor(te("te2"), free_slots(2));
  CHECK(sm.is_registered(te("te1")));
  CHECK(sm.is_registered(te("te2")));
  CHECK(sm.task_executor_count() == 2);
  CHECK(sm.slot_count() == 4);
  CHECK(sm.free_slot_count() == 4);
  sm.add_requests(job, requests({ids.make("a1"), ids.make("a2"),
                                 ids.make("a3")}));
  CHECK(sm.pending_count() == 3);
  auto got = sm.match();
  CHECK(ids.show(got) == "a1->te1:0 a2->te1:1 a3->te2:0");
  for (auto& a : got)
    CHECK(a.job == job);
  CHECK(sm.pending_count() == 0);
  CHECK(sm.free_slot_count() == 1);
  CHECK(sm.slot_count() == 4);
  // Nothing pending: a second match does nothing.
  CHECK(sm.match().empty());
  CHECK(sm.free_slot_count() == 1);
}

TEST_CASE("spread_out takes the TaskExecutor with the most free slots") {
  allocs ids;
  auto job = job_id::random();
  SUBCASE("equal TaskExecutors alternate, ties going to the earlier one") {
    slot_manager sm{true};
    sm.register_task_executor(te("te1"), free_slots(2));
    sm.register_task_executor(te("te2"), free_slots(2));
    sm.add_requests(job, requests({ids.make("a1"), ids.make("a2"),
                                   ids.make("a3"), ids.make("a4")}));
    CHECK(ids.show(sm.match()) == "a1->te1:0 a2->te2:0 a3->te1:1 a4->te2:1");
    CHECK(sm.free_slot_count() == 0);
  }
  SUBCASE("the emptiest TaskExecutor wins even when registered last") {
    slot_manager sm{true};
    sm.register_task_executor(te("te1"), free_slots(1));
    sm.register_task_executor(te("te2"), free_slots(3));
    sm.add_requests(job, requests({ids.make("a1"), ids.make("a2"),
                                   ids.make("a3")}));
    CHECK(ids.show(sm.match()) == "a1->te2:0 a2->te2:1 a3->te1:0");
  }
  SUBCASE("pack mode fills the first TaskExecutor with the same input") {
    slot_manager sm;
    sm.register_task_executor(te("te1"), free_slots(1));
    sm.register_task_executor(te("te2"), free_slots(3));
    sm.add_requests(job, requests({ids.make("a1"), ids.make("a2"),
                                   ids.make("a3")}));
    CHECK(ids.show(sm.match()) == "a1->te1:0 a2->te2:0 a3->te2:1");
  }
  SUBCASE("a TaskExecutor with more free slots but none fitting is skipped") {
    slot_manager sm{true};
    sm.register_task_executor(te("small"), free_slots(3, {1.0, 512, 0, 0}));
    sm.register_task_executor(te("big"), free_slots(1, {4.0, 4096, 0, 0}));
    sm.add_requests(job, requests({ids.make("a1")}, {2.0, 0, 0, 0}));
    CHECK(ids.show(sm.match()) == "a1->big:0");
  }
}

TEST_CASE("a job gets all of its slots or none, and waits without blocking "
          "other jobs") {
  allocs ids;
  auto wide = job_id::random();
  auto narrow = job_id::random();
  slot_manager sm;
  auto a1 = ids.make("a1");
  auto a2 = ids.make("a2");
  auto a3 = ids.make("a3");
  auto b1 = ids.make("b1");
  sm.add_requests(wide, requests({a1, a2, a3}));
  CHECK(sm.match().empty());
  CHECK(sm.pending_count() == 3);

  // One slot is not enough for the wide job; the narrow one takes it.
  sm.register_task_executor(te("te1"), free_slots(1));
  CHECK(sm.match().empty());
  CHECK(sm.free_slot_count() == 1);
  sm.add_requests(narrow, requests({b1}));
  CHECK(ids.show(sm.match()) == "b1->te1:0");
  CHECK(sm.pending_count() == 3);

  // Two more slots are still one short while the narrow job holds te1.
  sm.register_task_executor(te("te2"), free_slots(2));
  CHECK(sm.match().empty());
  CHECK(sm.free_slot_count() == 2);
  CHECK(sm.pending_count() == 3);

  sm.free_slot(te("te1"), b1);
  CHECK(ids.show(sm.match()) == "a1->te1:0 a2->te2:0 a3->te2:1");
  CHECK(sm.pending_count() == 0);
  CHECK(sm.free_slot_count() == 0);
}

TEST_CASE("a freed slot is reused before later slots of the same "
          "TaskExecutor") {
  allocs ids;
  auto job = job_id::random();
  slot_manager sm;
  sm.register_task_executor(te("te1"), free_slots(3));
  auto a1 = ids.make("a1");
  sm.add_requests(job, requests({a1, ids.make("a2")}));
  CHECK(ids.show(sm.match()) == "a1->te1:0 a2->te1:1");
  sm.free_slot(te("te1"), a1);
  sm.add_requests(job, requests({ids.make("a3"), ids.make("a4")}));
  CHECK(ids.show(sm.match()) == "a3->te1:0 a4->te1:2");
  CHECK(sm.free_slot_count() == 0);
}

TEST_CASE("freeing is exact: unknown, repeated and nil allocations change "
          "nothing") {
  allocs ids;
  auto job = job_id::random();
  slot_manager sm;
  sm.register_task_executor(te("te1"), free_slots(2));
  auto a1 = ids.make("a1");
  sm.add_requests(job, requests({a1}));
  REQUIRE(sm.match().size() == 1u);
  CHECK(sm.free_slot_count() == 1);
  sm.free_slot(te("te1"), allocation_id::random());
  CHECK(sm.free_slot_count() == 1);
  sm.free_slot(te("te2"), a1); // wrong TaskExecutor
  CHECK(sm.free_slot_count() == 1);
  sm.free_slot(te("te1"), a1);
  CHECK(sm.free_slot_count() == 2);
  sm.free_slot(te("te1"), a1);
  CHECK(sm.free_slot_count() == 2);
  sm.free_slot(te("te1"), allocation_id{});
  CHECK(sm.free_slot_count() == 2);
  CHECK(sm.slot_count() == 2);
}

TEST_CASE("unregistering a TaskExecutor returns the allocations it held") {
  allocs ids;
  auto job = job_id::random();
  slot_manager sm;
  sm.register_task_executor(te("te1"), free_slots(2));
  sm.register_task_executor(te("te2"), free_slots(2));
  sm.add_requests(job, requests({ids.make("a1"), ids.make("a2"),
                                 ids.make("a3")}));
  REQUIRE(sm.match().size() == 3u);

  CHECK(ids.show(sm.unregister_task_executor(te("te1"))) == "a1 a2");
  CHECK_FALSE(sm.is_registered(te("te1")));
  CHECK(sm.task_executor_count() == 1);
  CHECK(sm.slot_count() == 2);
  CHECK(sm.free_slot_count() == 1);

  CHECK(ids.show(sm.unregister_task_executor(te("te2"))) == "a3");
  CHECK(sm.unregister_task_executor(te("te2")).empty());
  CHECK(sm.unregister_task_executor(te("never")).empty());
  CHECK(sm.task_executor_count() == 0);
  CHECK(sm.slot_count() == 0);
  CHECK(sm.free_slot_count() == 0);
}

TEST_CASE("a registration reports slots that are already allocated") {
  allocs ids;
  auto held = ids.make("held");
  auto job = job_id::random();
  slot_report report = free_slots(3);
  report.slots[0].alloc = held;
  report.slots[0].job = job;
  slot_manager sm;
  sm.register_task_executor(te("te1"), report);
  CHECK(sm.slot_count() == 3);
  CHECK(sm.free_slot_count() == 2);
  sm.add_requests(job, requests({ids.make("a1")}));
  CHECK(ids.show(sm.match()) == "a1->te1:1");
  CHECK(ids.show(sm.unregister_task_executor(te("te1"))) == "held a1");
}

TEST_CASE("registering again replaces the TaskExecutor's slots") {
  allocs ids;
  auto job = job_id::random();
  slot_manager sm;
  sm.register_task_executor(te("te1"), free_slots(1));
  sm.add_requests(job, requests({ids.make("a1")}));
  REQUIRE(sm.match().size() == 1u);
  CHECK(sm.free_slot_count() == 0);
  sm.register_task_executor(te("te1"), free_slots(3));
  CHECK(sm.task_executor_count() == 1);
  CHECK(sm.slot_count() == 3);
  CHECK(sm.free_slot_count() == 3);
}

TEST_CASE("a job whose request no slot satisfies waits without blocking "
          "later jobs") {
  allocs ids;
  auto big_job = job_id::random();
  auto small_job = job_id::random();
  slot_manager sm;
  sm.register_task_executor(te("te1"), free_slots(2, {1.0, 512, 0, 0}));
  auto big = ids.make("big");
  sm.add_requests(big_job, requests({big}, {0, 1024, 0, 0}));
  sm.add_requests(small_job, requests({ids.make("any")}));
  sm.add_requests(small_job, requests({ids.make("fits")}, {1.0, 256, 0, 0}));
  CHECK(ids.show(sm.match()) == "any->te1:0 fits->te1:1");
  CHECK(sm.pending_count() == 1);
  // A slot that is still too small does not help.
  sm.register_task_executor(te("te2"), free_slots(1, {1.0, 768, 0, 0}));
  CHECK(sm.match().empty());
  CHECK(sm.pending_count() == 1);
  sm.register_task_executor(te("te3"), free_slots(1, {2.0, 2048, 0, 0}));
  CHECK(ids.show(sm.match()) == "big->te3:0");
  CHECK(sm.pending_count() == 0);
}

TEST_CASE("a TaskExecutor with mixed slots hands out the fitting one") {
  allocs ids;
  auto job = job_id::random();
  slot_report report = free_slots(3, {1.0, 512, 0, 0});
  report.slots[2].profile = {4.0, 4096, 0, 0};
  slot_manager sm;
  sm.register_task_executor(te("te1"), report);
  sm.add_requests(job, requests({ids.make("big")}, {2.0, 0, 0, 0}));
  sm.add_requests(job, requests({ids.make("small")}));
  CHECK(ids.show(sm.match()) == "big->te1:2 small->te1:0");
}

TEST_CASE("remove_job drops only that job's pending requests") {
  allocs ids;
  auto j1 = job_id::random();
  auto j2 = job_id::random();
  slot_manager sm;
  sm.add_requests(j1, requests({ids.make("x1"), ids.make("x2")}));
  sm.add_requests(j2, requests({ids.make("y1")}));
  sm.add_requests(j1, requests({ids.make("x3")}));
  CHECK(sm.pending_count() == 4);
  sm.remove_job(j1);
  CHECK(sm.pending_count() == 1);
  sm.register_task_executor(te("te1"), free_slots(4));
  auto got = sm.match();
  CHECK(ids.show(got) == "y1->te1:0");
  REQUIRE(got.size() == 1u);
  CHECK(got[0].job == j2);
  sm.remove_job(job_id::random());
  CHECK(sm.free_slot_count() == 3);
}

} // TEST_SUITE

// -- slot_table ---------------------------------------------------------------

TEST_SUITE("slot_table") {

TEST_CASE("a new table reports every slot free with its profile") {
  resource_profile p{1.0, 512, 64, 32};
  slot_table t{3, p};
  CHECK(t.size() == 3);
  CHECK(t.free_count() == 3);
  CHECK(t.profile(2) == p);
  auto r = t.report();
  REQUIRE(r.slots.size() == 3u);
  for (int32_t i = 0; i < 3; ++i) {
    auto& s = r.slots[static_cast<size_t>(i)];
    CHECK(s.index == i);
    CHECK(s.profile == p);
    CHECK_FALSE(s.alloc.valid());
    CHECK_FALSE(s.job.valid());
  }
}

TEST_CASE("allocate reserves a slot and refuses a second allocation") {
  slot_table t{2, {}};
  auto job = job_id::random();
  auto leader = job_master_id::random();
  auto a = allocation_id::random();
  auto b = allocation_id::random();
  CHECK(t.allocate(0, a, job, leader) == "");
  CHECK(t.free_count() == 1);
  CHECK(t.allocate(0, b, job, leader) == "slot 0 is already allocated");
  // Allocating the same allocation again is harmless (a repeated grant).
  CHECK(t.allocate(0, a, job, leader) == "");
  CHECK(t.free_count() == 1);
  CHECK(t.allocate(2, b, job, leader) == "no slot 2");
  CHECK(t.allocate(-1, b, job, leader) == "no slot -1");
  CHECK(t.allocate(1, b, job, leader) == "");
  CHECK(t.free_count() == 0);
  auto r = t.report();
  CHECK(r.slots[0].alloc == a);
  CHECK(r.slots[0].job == job);
  CHECK(r.slots[1].alloc == b);
}

TEST_CASE("one allocation cannot hold two slots") {
  slot_table t{2, {}};
  auto job = job_id::random();
  auto leader = job_master_id::random();
  auto a = allocation_id::random();
  REQUIRE(t.allocate(0, a, job, leader) == "");
  CHECK(t.allocate(1, a, job, leader)
        == fmt::format("allocation {} already holds slot 0", a.to_string()));
  CHECK(t.free_count() == 1);
  CHECK_FALSE(t.report().slots[1].alloc.valid());
  CHECK(t.free(a));
  CHECK(t.free_count() == 2);
}

TEST_CASE("owned_by checks allocation, job and leader") {
  slot_table t{2, {}};
  auto job = job_id::random();
  auto leader = job_master_id::random();
  auto a = allocation_id::random();
  REQUIRE(t.allocate(1, a, job, leader) == "");
  CHECK(t.owned_by(a, job, leader));
  CHECK_FALSE(t.owned_by(a, job, job_master_id::random()));
  CHECK_FALSE(t.owned_by(a, job_id::random(), leader));
  CHECK_FALSE(t.owned_by(allocation_id::random(), job, leader));
  CHECK(t.activate(a));
  CHECK(t.owned_by(a, job, leader));
  CHECK_FALSE(t.activate(allocation_id::random()));
  REQUIRE(t.free(a));
  CHECK_FALSE(t.owned_by(a, job, leader));
  CHECK_FALSE(t.activate(a));
}

TEST_CASE("free releases one allocation, allocated or active") {
  slot_table t{3, {}};
  auto job = job_id::random();
  auto leader = job_master_id::random();
  auto a = allocation_id::random();
  auto b = allocation_id::random();
  REQUIRE(t.allocate(0, a, job, leader) == "");
  REQUIRE(t.allocate(2, b, job, leader) == "");
  REQUIRE(t.activate(b));
  CHECK(t.free_count() == 1);
  CHECK(t.free(b));
  CHECK(t.free_count() == 2);
  CHECK_FALSE(t.free(b));
  CHECK_FALSE(t.free(allocation_id::random()));
  CHECK(t.free_count() == 2);
  auto r = t.report();
  CHECK_FALSE(r.slots[2].alloc.valid());
  CHECK_FALSE(r.slots[2].job.valid());
  CHECK(r.slots[0].alloc == a);
  // A freed slot can be allocated again, to anyone.
  auto c = allocation_id::random();
  CHECK(t.allocate(2, c, job_id::random(), job_master_id::random()) == "");
  CHECK(t.free_count() == 1);
}

TEST_CASE("free_job frees exactly that job's slots") {
  slot_table t{4, {}};
  auto j1 = job_id::random();
  auto j2 = job_id::random();
  auto leader = job_master_id::random();
  std::vector<allocation_id> a(4);
  for (auto& x : a)
    x = allocation_id::random();
  REQUIRE(t.allocate(0, a[0], j1, leader) == "");
  REQUIRE(t.allocate(1, a[1], j2, leader) == "");
  REQUIRE(t.allocate(3, a[3], j1, leader) == "");
  REQUIRE(t.activate(a[3]));
  CHECK(t.free_count() == 1);
  auto freed = t.free_job(j1);
  CHECK(freed == std::vector<allocation_id>{a[0], a[3]});
  CHECK(t.free_count() == 3);
  CHECK(t.owned_by(a[1], j2, leader));
  CHECK_FALSE(t.owned_by(a[0], j1, leader));
  CHECK_FALSE(t.free(a[0]));
  CHECK(t.free_job(j1).empty());
  CHECK(t.free_job(job_id::random()).empty());
  CHECK(t.free_count() == 3);
  CHECK(t.free_job(j2) == std::vector<allocation_id>{a[1]});
  CHECK(t.free_count() == 4);
}

TEST_CASE("a slot table's report registers with a slot manager") {
  slot_table t{2, {1.0, 512, 0, 0}};
  auto job = job_id::random();
  auto held = allocation_id::random();
  REQUIRE(t.allocate(1, held, job, job_master_id::random()) == "");
  slot_manager sm;
  sm.register_task_executor(te("te1"), t.report());
  CHECK(sm.slot_count() == 2);
  CHECK(sm.free_slot_count() == 1);
  auto a = allocation_id::random();
  sm.add_requests(job, requests({a}, {1.0, 512, 0, 0}));
  auto got = sm.match();
  REQUIRE(got.size() == 1u);
  CHECK(got[0].slot_index == 0);
  CHECK(t.allocate(got[0].slot_index, a, job, job_master_id::random()) == "");
  CHECK(sm.unregister_task_executor(te("te1"))
        == std::vector<allocation_id>{a, held});
}

} // TEST_SUITE

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

  // The channels the producers' gates use tile j's input channels exactly.
  std::set<int32_t> channels;
  for (int32_t i = 0; i < 3; ++i)
    channels.insert(output_gate{a.outputs[0], i, exchange_options{}}.channel());
  for (int32_t i = 0; i < 2; ++i) {
    output_gate gate{b.outputs[0], i, exchange_options{}};
    CHECK(gate.targets() == std::vector<int32_t>{i});
    channels.insert(gate.channel());
  }
  CHECK(channels == std::set<int32_t>{0, 1, 2, 3});
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
}

} // TEST_SUITE

// -- output_gate --------------------------------------------------------------

TEST_SUITE("output_gate") {

TEST_CASE("a new gate is empty") {
  output_gate gate{desc(partitioning::hash, 3, 5), 2, exchange_options{}};
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
  output_gate gate{desc(partitioning::forward, 3, 2), 1, opts(100)};
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
  CHECK(out[0].records == numbers(1, 5));
  CHECK(gate.empty());
}

TEST_CASE("hash sends each key to one consumer, the same from every "
          "producer and every batch") {
  constexpr int32_t consumers = 4;
  output_gate p0{desc(partitioning::hash, consumers), 0, opts(3)};
  output_gate p1{desc(partitioning::hash, consumers), 1, opts(3)};
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
    p0.emit(a);
    p1.emit(b);
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

TEST_CASE("broadcast sends every record to every consumer") {
  output_gate gate{desc(partitioning::broadcast, 3), 1, opts(100)};
  CHECK(gate.channel() == 1);
  auto in = std::vector<record>{record::string("k", "x"),
                                record::integer("", 2),
                                record::string("", "y", 9)};
  auto expected = in;
  gate.emit(in);
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

TEST_CASE("rebalance goes round-robin from the producer's index") {
  output_gate gate{desc(partitioning::rebalance, 3), 1, opts(100)};
  auto in = numbers(0, 6);
  gate.emit(in);
  auto more = numbers(7, 8);
  gate.emit(more);
  gate.flush();
  auto got = nums_by_consumer(drain(gate));
  CHECK(got[1] == std::vector<int64_t>{0, 3, 6});
  CHECK(got[2] == std::vector<int64_t>{1, 4, 7});
  CHECK(got[0] == std::vector<int64_t>{2, 5, 8});
}

TEST_CASE("rebalance from several producers spreads evenly") {
  constexpr int32_t consumers = 4;
  std::map<int32_t, size_t> load;
  for (int32_t p = 0; p < 3; ++p) {
    output_gate gate{desc(partitioning::rebalance, consumers), p, opts(1000)};
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
  output_gate gate{desc(partitioning::forward, 1), 0, opts(3)};
  auto in = numbers(1, 7);
  gate.emit(in);
  CHECK(gate.backlogged());
  CHECK(gate.has_open_data());
  auto out = drain(gate);
  CHECK(sizes(out) == std::vector<size_t>{3, 3});
  CHECK(out[0].records == numbers(1, 3));
  CHECK(out[1].records == numbers(4, 6));
  CHECK_FALSE(gate.backlogged());
  CHECK(gate.has_open_data());
  CHECK_FALSE(gate.empty());
  gate.flush();
  out = drain(gate);
  CHECK(sizes(out) == std::vector<size_t>{1});
  CHECK(out[0].records == numbers(7, 7));
  CHECK(gate.empty());
  // An exact multiple leaves nothing open.
  auto six = numbers(1, 6);
  gate.emit(six);
  CHECK_FALSE(gate.has_open_data());
  CHECK(sizes(drain(gate)) == std::vector<size_t>{3, 3});
  CHECK(gate.empty());
}

TEST_CASE("a batch closes at batch_bytes") {
  // Each record is about 200 bytes: a 500-byte batch closes at the third.
  output_gate gate{desc(partitioning::forward, 1), 0, opts(1000, 1000, 500)};
  std::vector<record> in;
  for (int i = 0; i < 7; ++i)
    in.push_back(record::string("", std::string(200, 'x')));
  gate.emit(in);
  CHECK(sizes(drain(gate)) == std::vector<size_t>{3, 3});
  gate.flush();
  CHECK(sizes(drain(gate)) == std::vector<size_t>{1});
}

TEST_CASE("credits limit what drain sends; add_credit releases the rest") {
  output_gate gate{desc(partitioning::forward, 2), 1, opts(2, 2)};
  auto in = numbers(1, 10);
  gate.emit(in);
  CHECK(gate.backlogged());
  auto out = drain(gate);
  REQUIRE(out.size() == 2u);
  CHECK(out[0].records == numbers(1, 2));
  CHECK(out[1].records == numbers(3, 4));
  CHECK(gate.backlogged());
  CHECK(drain(gate).empty()); // no credit left
  gate.add_credit(0, 5);      // not a target of this producer
  CHECK(drain(gate).empty());
  gate.add_credit(7, 5);      // no such consumer: ignored
  CHECK(drain(gate).empty());
  gate.add_credit(1, 1);
  out = drain(gate);
  REQUIRE(out.size() == 1u);
  CHECK(out[0].records == numbers(5, 6));
  gate.add_credit(1, 5);
  out = drain(gate);
  REQUIRE(out.size() == 2u);
  CHECK(out[0].records == numbers(7, 8));
  CHECK(out[1].records == numbers(9, 10));
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
  output_gate gate{desc(partitioning::rebalance, 2), 0, opts(1, 1)};
  auto in = numbers(0, 5); // 0,2,4 to consumer 0; 1,3,5 to consumer 1
  gate.emit(in);
  auto first = nums_by_consumer(drain(gate));
  CHECK(first[0] == std::vector<int64_t>{0});
  CHECK(first[1] == std::vector<int64_t>{1});
  gate.add_credit(1, 2);
  auto second = nums_by_consumer(drain(gate));
  CHECK(second.count(0) == 0u);
  CHECK(second[1] == std::vector<int64_t>{3, 5});
  CHECK(gate.backlogged());
  gate.add_credit(0, 2);
  auto third = nums_by_consumer(drain(gate));
  CHECK(third[0] == std::vector<int64_t>{2, 4});
  CHECK(gate.empty());
}

TEST_CASE("flush closes partial batches on every lane") {
  output_gate gate{desc(partitioning::hash, 3), 0, opts(1000)};
  std::vector<record> in;
  for (int i = 0; i < 30; ++i)
    in.push_back(record::integer("k" + std::to_string(i), i));
  gate.emit(in);
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
  output_gate gate{desc(partitioning::hash, 2, 0, "count"), 0, opts(1000)};
  std::vector<record> in{record::integer("a", 5, 10), record::integer("b", 7, 1),
                         record::integer("a", 9, 30)};
  gate.emit(in);
  std::vector<record> more{record::integer("c", 1, 2), record::integer("a", 0, 20),
                           record::integer("b", 3, 4)};
  gate.emit(more);
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
    ops::keyed_aggregation expected{agg_kind};
    for (auto r : raw)
      expected.add(std::move(r), false);
    std::vector<record> want;
    expected.drain_sorted(want);

    // Two producers with small combiners, so partials are drained mid-way.
    exchange_options o = opts(4);
    o.combiner_keys = 3;
    ops::keyed_aggregation consumer{agg_kind};
    for (int32_t p = 0; p < 2; ++p) {
      output_gate gate{desc(partitioning::hash, 2, 0, kind), p, o};
      for (size_t at = static_cast<size_t>(p) * 10; at < raw.size(); at += 20) {
        std::vector<record> chunk(
          raw.begin() + static_cast<std::ptrdiff_t>(at),
          raw.begin()
            + static_cast<std::ptrdiff_t>(std::min(at + 10, raw.size())));
        gate.emit(chunk);
      }
      gate.flush();
      for (auto& b : drain(gate))
        for (auto& r : b.records)
          consumer.add(std::move(r), true);
      CHECK(gate.empty());
    }
    std::vector<record> got;
    consumer.drain_sorted(got);
    CHECK(got == want);
  }
}

TEST_CASE("a combiner holding combiner_keys keys drains without a flush") {
  exchange_options o = opts(1);
  o.combiner_keys = 3;
  output_gate gate{desc(partitioning::hash, 1, 0, "sum"), 0, o};
  std::vector<record> two{record::integer("a", 1), record::integer("b", 2),
                          record::integer("a", 3)};
  gate.emit(two);
  CHECK(drain(gate).empty()); // two keys: still combining
  CHECK(gate.has_open_data());
  std::vector<record> third{record::integer("c", 4)};
  gate.emit(third);
  auto out = drain(gate);
  std::map<std::string, int64_t> sums;
  for (auto& b : out)
    for (auto& r : b.records)
      sums[r.key] = r.num;
  CHECK(sums == std::map<std::string, int64_t>{{"a", 4}, {"b", 2}, {"c", 4}});
  CHECK(gate.empty());
}

TEST_CASE("a gate moves with its buffered records") {
  output_gate gate{desc(partitioning::forward, 1), 0, opts(100)};
  auto in = numbers(1, 3);
  gate.emit(in);
  output_gate moved{std::move(gate)};
  CHECK(moved.has_open_data());
  moved.flush();
  auto out = drain(moved);
  REQUIRE(out.size() == 1u);
  CHECK(out[0].records == numbers(1, 3));
}

} // TEST_SUITE

TEST_SUITE("input_queue") {

TEST_CASE("events leave in channel order and the last open channel ends input") {
  weir::input_queue q{3};
  CHECK(q.open_channels() == 3);
  q.push_end(2, 0);
  q.push_batch(0, weir::input_event{0, 1, weir::record_batch{{weir::record::integer("", 5)}}, false});
  auto first = q.pop();
  CHECK(first.end);
  CHECK(first.channel == 2);
  auto second = q.pop();
  CHECK_FALSE(second.end);
  CHECK(second.port == 1);
  CHECK(second.batch.records.size() == 1);
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
    return weir::input_event{channel, 0,
                             weir::record_batch{{weir::record::integer("", value)}},
                             false};
  };
  q.push_end(0, 3);          // the end came first
  q.push_batch(2, batch(0, 102));
  q.push_batch(1, batch(1, 201)); // other channel: waits for its batch 0
  CHECK(q.empty());
  q.push_batch(0, batch(0, 100));
  q.push_batch(0, batch(0, 100)); // a duplicate: dropped
  auto a = q.pop();
  CHECK(a.batch.records[0].num == 100);
  CHECK(q.empty()); // batch 1 of channel 0 is still missing
  q.push_batch(1, batch(0, 101));
  CHECK(q.pop().batch.records[0].num == 101);
  CHECK(q.pop().batch.records[0].num == 102);
  auto end = q.pop();
  CHECK(end.end);
  CHECK(end.channel == 0);
  CHECK(q.empty());
  q.push_batch(0, batch(1, 200));
  CHECK(q.pop().batch.records[0].num == 200);
  CHECK(q.pop().batch.records[0].num == 201);
  q.push_batch(0, batch(5, 1)); // an unknown channel: dropped
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
  ev.batch.records.push_back(record::integer({}, value));
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
  CHECK(held[0].batch.records[0].num == 1);
  CHECK(held[1].batch.records[0].num == 2);
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
  output_gate gate{desc, 0, exchange_options{}};
  std::vector<record> rs{record::integer({}, 1), record::integer({}, 2),
                         record::integer({}, 3)};
  gate.emit(rs);
  gate.emit_barrier(5);
  auto sent = drain(gate);
  REQUIRE(sent.size() == 4); // one data batch and one barrier per lane
  for (auto& s : sent) {
    bool barrier = s.barrier == 5;
    CHECK(barrier == s.records.empty());
    CHECK(s.seq == (barrier ? 1 : 0));
  }
}
