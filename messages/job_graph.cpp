#include "messages/job_graph.hpp"

#include <set>

#include <fmt/format.h>

#include "messages/errors.hpp"
#include "messages/file_names.hpp"

namespace weir {

std::string to_string(partitioning x) {
  switch (x) {
    case partitioning::forward:
      return "forward";
    case partitioning::hash:
      return "hash";
    case partitioning::rebalance:
      return "rebalance";
    case partitioning::broadcast:
      return "broadcast";
  }
  return "unknown";
}

std::optional<partitioning> parse_partitioning(std::string_view text) {
  for (auto p : {partitioning::forward, partitioning::hash,
                 partitioning::rebalance, partitioning::broadcast})
    if (text == to_string(p))
      return p;
  return std::nullopt;
}

bool operator==(const watermark_spec& a, const watermark_spec& b) {
  return a.field == b.field
         && a.max_out_of_orderness_ms == b.max_out_of_orderness_ms
         && a.idle_timeout_ms == b.idle_timeout_ms
         && a.interval_ms == b.interval_ms;
}

bool operator==(const vertex_spec& a, const vertex_spec& b) {
  return a.id == b.id && a.op == b.op && a.params == b.params
         && a.parallelism == b.parallelism && a.output == b.output
         && a.watermarks == b.watermarks && a.side_outputs == b.side_outputs;
}

bool operator==(const edge_spec& a, const edge_spec& b) {
  return a.from == b.from && a.to == b.to && a.part == b.part
         && a.key == b.key && a.output == b.output;
}

bool operator==(const blob_ref& a, const blob_ref& b) {
  return a.name == b.name && a.hash == b.hash && a.origin == b.origin;
}

bool operator==(const user_code& a, const user_code& b) {
  return a.libraries == b.libraries && a.files == b.files
         && a.classpath == b.classpath && a.always_ship == b.always_ship;
}

std::string to_string(job_priority p) {
  switch (p) {
    case job_priority::daemon:
      return "daemon";
    case job_priority::normal:
      return "normal";
    case job_priority::driver:
      return "driver";
  }
  return "normal";
}

bool operator==(const job_graph& a, const job_graph& b) {
  return a.id == b.id && a.name == b.name && a.vertices == b.vertices
         && a.edges == b.edges && a.config == b.config && a.code == b.code
         && a.priority == b.priority && a.application == b.application;
}

const schema& rows_of(const job_graph& g, const edge_spec& e) {
  static const schema none;
  auto i = vertex_index(g, e.from);
  if (i < 0)
    return none;
  auto& v = g.vertices[static_cast<size_t>(i)];
  if (e.output.empty())
    return v.output;
  auto side = v.side_outputs.find(e.output);
  return side == v.side_outputs.end() ? none : side->second;
}

int32_t vertex_index(const job_graph& g, std::string_view id) {
  for (size_t i = 0; i < g.vertices.size(); ++i)
    if (g.vertices[i].id == id)
      return static_cast<int32_t>(i);
  return -1;
}

std::vector<int32_t> topological_order(const job_graph& g) {
  auto n = g.vertices.size();
  std::vector<int32_t> indegree(n, 0);
  for (auto& e : g.edges) {
    auto to = vertex_index(g, e.to);
    if (to >= 0)
      ++indegree[static_cast<size_t>(to)];
  }
  std::vector<int32_t> order;
  for (size_t i = 0; i < n; ++i)
    if (indegree[i] == 0)
      order.push_back(static_cast<int32_t>(i));
  for (size_t k = 0; k < order.size(); ++k) {
    auto& from = g.vertices[static_cast<size_t>(order[k])].id;
    for (auto& e : g.edges) {
      if (e.from != from)
        continue;
      auto to = vertex_index(g, e.to);
      if (to >= 0 && --indegree[static_cast<size_t>(to)] == 0)
        order.push_back(to);
    }
  }
  return order;
}

std::string name_length_problem(std::string_view field, std::string_view name) {
  if (name.size() <= max_name_bytes)
    return {};
  return fmt::format("{}: {} bytes, more than the {} allowed", field,
                     name.size(), max_name_bytes);
}

namespace {

std::string shape_problem(const job_graph& g) {
  if (auto problem = name_length_problem("job name", g.name); !problem.empty())
    return problem;
  for (size_t i = 0; i < g.vertices.size(); ++i) {
    auto& v = g.vertices[i];
    for (auto problem :
         {name_length_problem(fmt::format("vertex {}: id", i), v.id),
          name_length_problem(fmt::format("vertex {}: operator", i), v.op)})
      if (!problem.empty())
        return problem;
  }
  if (g.vertices.empty())
    return "job has no vertices";
  std::set<std::string> ids;
  for (auto& v : g.vertices) {
    if (v.id.empty())
      return "a vertex has an empty id";
    // Vertex ids name a subtask's state directories and checkpoint files.
    if (auto err = check_file_name("vertex id", v.id))
      return describe(err);
    if (!ids.insert(v.id).second)
      return fmt::format("vertex '{}': duplicate vertex id", v.id);
    if (v.parallelism < 1 || v.parallelism > max_parallelism)
      return fmt::format("vertex '{}': parallelism {} is outside [1, {}]",
                         v.id, v.parallelism, max_parallelism);
  }
  std::set<std::pair<std::string, std::string>> seen;
  for (auto& e : g.edges) {
    auto from = vertex_index(g, e.from);
    auto to = vertex_index(g, e.to);
    if (from < 0)
      return fmt::format("edge '{}' -> '{}': no vertex '{}'", e.from, e.to,
                         e.from);
    if (to < 0)
      return fmt::format("edge '{}' -> '{}': no vertex '{}'", e.from, e.to,
                         e.to);
    if (from == to)
      return fmt::format("edge '{}' -> '{}': a vertex cannot feed itself",
                         e.from, e.to);
    if (!seen.emplace(e.from, e.to).second)
      return fmt::format("edge '{}' -> '{}': duplicate edge", e.from, e.to);
    auto pf = g.vertices[static_cast<size_t>(from)].parallelism;
    auto pt = g.vertices[static_cast<size_t>(to)].parallelism;
    if (e.part == partitioning::forward && pf != pt)
      return fmt::format("edge '{}' -> '{}': forward partitioning needs equal "
                         "parallelism, but '{}' has {} and '{}' has {}",
                         e.from, e.to, e.from, pf, e.to, pt);
  }
  if (topological_order(g).size() != g.vertices.size()) {
    auto order = topological_order(g);
    std::set<int32_t> placed(order.begin(), order.end());
    for (size_t i = 0; i < g.vertices.size(); ++i)
      if (placed.count(static_cast<int32_t>(i)) == 0)
        return fmt::format("vertex '{}': part of a cycle", g.vertices[i].id);
  }
  return {};
}

} // namespace

caf::error check_job_graph_shape(const job_graph& g) {
  auto problem = shape_problem(g);
  if (problem.empty())
    return caf::none;
  return make_error(errc::invalid_job, std::move(problem));
}

} // namespace weir
