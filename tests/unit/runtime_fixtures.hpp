#pragma once

// Helpers shared by the unit tests of the runtime's plain classes (slots,
// execution graph, data plane): small graphs, slot reports, gate drains.
#include <algorithm>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

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
#include "operators/builtin/aggregation.hpp"
#include "tests/rows.hpp"

namespace weir::test {

using namespace weir;


// -- helpers: slots -----------------------------------------------------------

inline resource_id te(const char* name) {
  return resource_id{name};
}

/// A report of `n` free slots with profile `p`.
inline slot_report free_slots(int32_t n, resource_profile p = {}) {
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

inline std::vector<slot_request> requests(std::initializer_list<allocation_id> ids,
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
inline job_graph word_count() {
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
inline job_graph two_inputs() {
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
inline job_graph generator_into(const std::string& agg_op,
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

inline std::string show(const std::vector<int32_t>& xs) {
  std::string out;
  for (auto x : xs)
    out += (out.empty() ? "" : " ") + std::to_string(x);
  return out;
}

inline std::string show(const std::vector<std::vector<int32_t>>& xs) {
  std::string out;
  for (auto& x : xs)
    out += "[" + show(x) + "]";
  return out;
}

inline std::string show(const std::vector<vertex_spec>& chain) {
  std::string out;
  for (auto& v : chain)
    out += (out.empty() ? "" : " ") + v.id;
  return out;
}

// -- helpers: output gates ----------------------------------------------------

/// A hash output is keyed by the field "key", as the planner keys today's
/// specs.
inline output_desc desc(partitioning part, int32_t consumers, int32_t channel_base = 0,
                 std::string combine = {}) {
  output_desc d;
  d.part = part;
  d.consumers = consumers;
  d.channel_base = channel_base;
  d.combine = std::move(combine);
  if (part == partitioning::hash)
    d.key = {"key"};
  return d;
}

inline exchange_options opts(size_t batch_records, int32_t initial_credit = 1000,
                      size_t batch_bytes = 1 << 30) {
  exchange_options o;
  o.batch_records = batch_records;
  o.initial_credit = initial_credit;
  o.batch_bytes = batch_bytes;
  return o;
}

/// One batch or barrier as sent by drain().
struct sent_batch {
  int32_t consumer;
  int32_t channel;
  row_batch rows;
  /// The rows as records (their schema is a default one).
  std::vector<record> records;
  int64_t seq = 0;
  int64_t barrier = -1; ///< the barrier's checkpoint id; -1: a batch
  /// A watermark's event time (no_watermark: a batch or a barrier).
  int64_t watermark = no_watermark;
};

inline std::vector<sent_batch> drain(output_gate& gate) {
  std::vector<sent_batch> out;
  gate.drain(
    [&](int32_t consumer, int32_t channel, int64_t seq, row_batch&& b) {
      CHECK(seq == gate.sent(consumer) - 1); // numbered 0, 1, ... per consumer
      auto records = to_records(b);
      out.push_back(
        sent_batch{consumer, channel, std::move(b), std::move(records), seq});
    },
    [&](int32_t consumer, int32_t channel, int64_t seq,
        const checkpoint_barrier& b) {
      CHECK(seq == gate.sent(consumer) - 1);
      out.push_back(sent_batch{consumer, channel, {}, {}, seq, b.id});
    },
    [&](int32_t consumer, int32_t channel, int64_t seq,
        const watermark_mark& m) {
      CHECK(seq == gate.sent(consumer) - 1);
      out.push_back(sent_batch{consumer, channel, {}, {}, seq, -1, m.time});
    },
    [&](int32_t, int32_t, int32_t) {});
  return out;
}

// -- helpers: input events ----------------------------------------------------

inline bool is_end(const input_event& ev) {
  return std::holds_alternative<channel_end>(ev.body);
}

/// The rows of a batch event as records.
inline std::vector<record> records_of(const input_event& ev) {
  return to_records(std::get<row_batch>(ev.body));
}

/// The nums of the records each consumer received, in order.
inline std::map<int32_t, std::vector<int64_t>>
nums_by_consumer(const std::vector<sent_batch>& batches) {
  std::map<int32_t, std::vector<int64_t>> out;
  for (auto& b : batches)
    for (auto& r : b.records)
      out[b.consumer].push_back(r.num);
  return out;
}

inline std::vector<size_t> sizes(const std::vector<sent_batch>& batches) {
  std::vector<size_t> out;
  for (auto& b : batches)
    out.push_back(b.records.size());
  return out;
}

inline int32_t hash_target(const std::string& key, int32_t consumers) {
  return static_cast<int32_t>(XXH3_64bits(key.data(), key.size())
                              % static_cast<uint64_t>(consumers));
}


} // namespace weir::test
