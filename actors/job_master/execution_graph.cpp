#include "actors/job_master/execution_graph.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "messages/errors.hpp"
#include "messages/key_groups.hpp"
#include "plan/chaining.hpp"
#include "operators/registry.hpp"

namespace weir {

execution_graph::execution_graph(const job_graph& g) : graph_(g) {
  task_of_vertex_.assign(g.vertices.size(), -1);
  for (auto& chain : compute_chains(g)) {
    task_vertex t;
    for (auto v : chain) {
      if (!t.name.empty())
        t.name += " -> ";
      t.name += g.vertices[static_cast<size_t>(v)].id;
      task_of_vertex_[static_cast<size_t>(v)] = static_cast<int32_t>(tasks_.size());
    }
    t.vertices = chain;
    t.parallelism = g.vertices[static_cast<size_t>(chain.front())].parallelism;
    t.max_parallelism = default_max_parallelism(t.parallelism);
    tasks_.push_back(std::move(t));
  }
  for (size_t e = 0; e < g.edges.size(); ++e) {
    auto& edge = g.edges[e];
    if (is_chained(g, edge))
      continue;
    auto from = task_of_vertex_[static_cast<size_t>(vertex_index(g, edge.from))];
    auto to = task_of_vertex_[static_cast<size_t>(vertex_index(g, edge.to))];
    tasks_[static_cast<size_t>(from)].outputs.push_back(static_cast<int32_t>(e));
    tasks_[static_cast<size_t>(to)].inputs.push_back(static_cast<int32_t>(e));
  }
  auto& reg = ops::registry::builtin();
  for (size_t i = 0; i < tasks_.size(); ++i) {
    auto& t = tasks_[i];
    t.first_execution = static_cast<int32_t>(executions_.size());
    for (int32_t s = 0; s < t.parallelism; ++s) {
      execution x;
      x.task = static_cast<int32_t>(i);
      x.subtask = s;
      x.attempt = execution_attempt_id::random();
      by_attempt_.emplace(x.attempt, static_cast<int32_t>(executions_.size()));
      executions_.push_back(x);
    }
    slots_needed_ = std::max(slots_needed_, t.parallelism);
    if (t.inputs.empty()) {
      auto& head = g.vertices[static_cast<size_t>(t.vertices.front())];
      auto* f = reg.find(head.op);
      if (f != nullptr && f->bounded && !f->bounded(head.params))
        bounded_ = false;
    }
  }
  counts_[static_cast<size_t>(execution_state::created)]
    = static_cast<int32_t>(executions_.size());
}

caf::error execution_graph::set_max_parallelism(int32_t n) {
  for (auto& t : tasks_) {
    if (t.parallelism > n)
      return make_error(
        errc::invalid_job,
        fmt::format("vertex '{}' runs at parallelism {}, above "
                    "pipeline.max-parallelism {}",
                    graph_.vertices[static_cast<size_t>(t.vertices.front())].id,
                    t.parallelism, n));
    t.max_parallelism = n;
    t.max_parallelism_set = true;
  }
  return caf::none;
}

void execution_graph::adopt_max_parallelism(
  const std::map<std::string, int32_t>& recorded) {
  for (auto& t : tasks_) {
    if (t.max_parallelism_set)
      continue;
    for (auto v : t.vertices)
      if (auto i = recorded.find(graph_.vertices[static_cast<size_t>(v)].id);
          i != recorded.end()) {
        t.max_parallelism = i->second;
        break;
      }
  }
}

int32_t execution_graph::max_parallelism_of(int32_t v) const {
  return tasks_[static_cast<size_t>(task_of_vertex_[static_cast<size_t>(v)])]
    .max_parallelism;
}

std::vector<int32_t> execution_graph::executions_in_slot(int32_t slot) const {
  std::vector<int32_t> result;
  for (auto& t : tasks_)
    if (slot < t.parallelism)
      result.push_back(t.first_execution + slot);
  return result;
}

input_gate_desc execution_graph::gate_for(int32_t edge) const {
  auto& e = graph_.edges[static_cast<size_t>(edge)];
  auto& producer = graph_.vertices[static_cast<size_t>(vertex_index(graph_, e.from))];
  input_gate_desc gate;
  gate.channels = e.part == partitioning::forward ? 1 : producer.parallelism;
  gate.preaggregated = !output_for(edge).combine.empty();
  gate.from = e.from;
  gate.rows = rows_of(graph_, e);
  gate.key = e.key;
  return gate;
}

output_desc execution_graph::output_for(int32_t edge) const {
  auto& e = graph_.edges[static_cast<size_t>(edge)];
  auto& consumer_vertex = graph_.vertices[static_cast<size_t>(vertex_index(graph_, e.to))];
  auto& consumer = tasks_[static_cast<size_t>(
    task_of_vertex_[static_cast<size_t>(vertex_index(graph_, e.to))])];
  output_desc out;
  out.part = e.part;
  out.consumers = consumer.parallelism;
  out.output = e.output;
  for (auto in : consumer.inputs) {
    if (in == edge)
      break;
    auto& other = graph_.edges[static_cast<size_t>(in)];
    auto& producer = graph_.vertices[static_cast<size_t>(vertex_index(graph_, other.from))];
    out.channel_base += other.part == partitioning::forward ? 1 : producer.parallelism;
  }
  // A hash exchange into a keyed aggregation that is not itself a sink can
  // pre-aggregate on the producer side (a combiner); results are equal.
  auto* f = ops::registry::builtin().find(consumer_vertex.op);
  if (e.part == partitioning::hash && f != nullptr && f->combinable) {
    out.combine = consumer_vertex.op;
    out.combine_params = consumer_vertex.params;
  }
  out.key = e.key;
  if (e.part == partitioning::hash)
    out.key_groups = consumer.max_parallelism;
  return out;
}

task_deployment execution_graph::deployment(int32_t flat,
                                            allocation_id alloc) const {
  auto& x = executions_[static_cast<size_t>(flat)];
  auto& t = tasks_[static_cast<size_t>(x.task)];
  task_deployment d;
  d.job = graph_.id;
  d.attempt = x.attempt;
  d.attempt_number = x.attempt_number;
  d.alloc = alloc;
  d.task_index = x.task;
  d.subtask_index = x.subtask;
  d.parallelism = t.parallelism;
  d.max_parallelism = t.max_parallelism;
  d.job_name = graph_.name;
  d.task_name = t.name;
  for (auto v : t.vertices)
    d.chain.push_back(graph_.vertices[static_cast<size_t>(v)]);
  // The planner made all input edges carry one schema (the producers'
  // output), and all hash inputs use one key (plan/schemas.hpp).
  for (auto e : t.inputs) {
    auto& edge = graph_.edges[static_cast<size_t>(e)];
    if (d.inputs.empty())
      d.input = rows_of(graph_, edge);
    if (edge.part == partitioning::hash && d.input_key.empty())
      d.input_key = edge.key;
    d.inputs.push_back(gate_for(e));
  }
  for (auto e : t.outputs)
    d.outputs.push_back(output_for(e));
  d.bounded = bounded_;
  return d;
}

std::vector<std::vector<int32_t>> execution_graph::consumers(int32_t flat) const {
  auto& x = executions_[static_cast<size_t>(flat)];
  auto& t = tasks_[static_cast<size_t>(x.task)];
  std::vector<std::vector<int32_t>> result;
  for (auto e : t.outputs) {
    auto& edge = graph_.edges[static_cast<size_t>(e)];
    auto& consumer = tasks_[static_cast<size_t>(
      task_of_vertex_[static_cast<size_t>(vertex_index(graph_, edge.to))])];
    std::vector<int32_t> list;
    for (int32_t s = 0; s < consumer.parallelism; ++s)
      list.push_back(consumer.first_execution + s);
    result.push_back(std::move(list));
  }
  return result;
}

int32_t execution_graph::find(execution_attempt_id attempt) const {
  auto i = by_attempt_.find(attempt);
  return i == by_attempt_.end() ? -1 : i->second;
}

bool execution_graph::transition(int32_t flat, execution_state to) {
  auto& x = executions_[static_cast<size_t>(flat)];
  if (!is_valid_transition(x.state, to))
    return false;
  --counts_[static_cast<size_t>(x.state)];
  ++counts_[static_cast<size_t>(to)];
  x.state = to;
  if (to == execution_state::deploying)
    x.start_time_ms = now_ms();
  if (is_terminal(to))
    x.end_time_ms = now_ms();
  return true;
}

void execution_graph::restart() {
  by_attempt_.clear();
  for (size_t i = 0; i < executions_.size(); ++i) {
    auto& x = executions_[i];
    x.attempt = execution_attempt_id::random();
    ++x.attempt_number;
    x.state = execution_state::created;
    x.metrics = {};
    x.start_time_ms = 0;
    x.end_time_ms = 0;
    by_attempt_.emplace(x.attempt, static_cast<int32_t>(i));
  }
  counts_ = {};
  counts_[static_cast<size_t>(execution_state::created)]
    = static_cast<int32_t>(executions_.size());
}

void execution_graph::adopt(int32_t flat, execution_attempt_id attempt,
                            int32_t number) {
  auto& x = executions_[static_cast<size_t>(flat)];
  by_attempt_.erase(x.attempt);
  x.attempt = attempt;
  x.attempt_number = number;
  by_attempt_[attempt] = flat;
  --counts_[static_cast<size_t>(x.state)];
  x.state = execution_state::running;
  ++counts_[static_cast<size_t>(x.state)];
  x.start_time_ms = now_ms();
  x.end_time_ms = 0;
}

void execution_graph::set_attempt_number(int32_t n) {
  for (auto& x : executions_)
    x.attempt_number = n;
}

void execution_graph::set_metrics(int32_t flat, const io_metrics& m) {
  executions_[static_cast<size_t>(flat)].metrics = m;
}

int32_t execution_graph::count(execution_state s) const {
  return counts_[static_cast<size_t>(s)];
}

bool execution_graph::all_finished() const {
  return count(execution_state::finished) == static_cast<int32_t>(size());
}

bool execution_graph::all_terminal() const {
  return count(execution_state::finished) + count(execution_state::canceled)
           + count(execution_state::failed)
         == static_cast<int32_t>(size());
}

io_metrics execution_graph::total_metrics() const {
  io_metrics total;
  // Every vertex, in the graph's order, even before its subtasks report.
  for (auto& v : graph_.vertices)
    total.vertices.push_back(vertex_metrics{v.id, 0, 0, {}});
  for (auto& x : executions_)
    add_vertex_metrics(total.vertices, x.metrics.vertices);
  for (auto& t : tasks_) {
    bool source = t.inputs.empty();
    bool sink = t.outputs.empty();
    for (int32_t s = 0; s < t.parallelism; ++s) {
      auto& m = executions_[static_cast<size_t>(t.first_execution + s)].metrics;
      if (source)
        total.records_in += m.records_in;
      if (sink)
        total.records_out += m.records_out;
      total.records_skipped += m.records_skipped;
      if (total.skipped_note.empty())
        total.skipped_note = m.skipped_note;
    }
  }
  return total;
}

} // namespace weir
