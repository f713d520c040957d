#include "plan/chaining.hpp"

#include <algorithm>
#include <cctype>
#include <cstddef>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "operators/registry.hpp"

namespace weir {

namespace {

size_t count_edges(const job_graph& g, const std::string& id, bool outgoing) {
  size_t n = 0;
  for (auto& e : g.edges)
    if ((outgoing ? e.from : e.to) == id)
      ++n;
  return n;
}

const vertex_spec& vertex_at(const job_graph& g, int32_t index) {
  return g.vertices[static_cast<size_t>(index)];
}

/// Lays out rows of cells in columns two spaces apart, every line indented by
/// two spaces, without trailing blanks.
std::string table(const std::vector<std::vector<std::string>>& rows) {
  std::vector<size_t> widths;
  for (auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()), 0);
    for (size_t c = 0; c < row.size(); ++c)
      widths[c] = std::max(widths[c], row[c].size());
  }
  std::string out;
  for (auto& row : rows) {
    std::string line;
    for (size_t c = 0; c < row.size(); ++c)
      line += fmt::format("  {:<{}}", row[c], widths[c]);
    while (!line.empty() && line.back() == ' ')
      line.pop_back();
    out += line + '\n';
  }
  return out;
}

/// The value as is, or in double quotes when it is empty or holds blanks or
/// quotes.
std::string quote_if_needed(const std::string& value) {
  bool plain = !value.empty();
  for (char c : value)
    plain = plain && !std::isspace(static_cast<unsigned char>(c)) && c != '"';
  if (plain)
    return value;
  std::string quoted = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\')
      quoted += '\\';
    quoted += c;
  }
  return quoted + '"';
}

std::string count_of(size_t n, const char* singular, const char* plural) {
  return fmt::format("{} {}", n, n == 1 ? singular : plural);
}

} // namespace

ops::role vertex_role(const job_graph& g, int32_t index) {
  auto& id = vertex_at(g, index).id;
  if (count_edges(g, id, false) == 0)
    return ops::role::source;
  return count_edges(g, id, true) == 0 ? ops::role::sink
                                       : ops::role::transform;
}

bool is_chained(const job_graph& g, const edge_spec& e) {
  if (e.part != partitioning::forward || !e.output.empty())
    return false; // a side output leaves its chain through a gate
  auto from = vertex_index(g, e.from);
  auto to = vertex_index(g, e.to);
  if (from < 0 || to < 0 || from == to)
    return false;
  return vertex_at(g, from).parallelism == vertex_at(g, to).parallelism
         && count_edges(g, e.from, true) == 1
         && count_edges(g, e.to, false) == 1;
}

std::vector<std::vector<int32_t>> compute_chains(const job_graph& g) {
  auto n = g.vertices.size();
  // next[i]: the vertex chained after i, or -1.
  std::vector<int32_t> next(n, -1);
  std::vector<bool> has_chained_input(n, false);
  for (auto& e : g.edges) {
    if (!is_chained(g, e))
      continue;
    auto to = vertex_index(g, e.to);
    next[static_cast<size_t>(vertex_index(g, e.from))] = to;
    has_chained_input[static_cast<size_t>(to)] = true;
  }
  std::vector<std::vector<int32_t>> chains;
  for (auto head : topological_order(g)) {
    if (has_chained_input[static_cast<size_t>(head)])
      continue;
    std::vector<int32_t> chain;
    for (auto v = head; v >= 0; v = next[static_cast<size_t>(v)])
      chain.push_back(v);
    chains.push_back(std::move(chain));
  }
  return chains;
}

std::string describe_plan(const job_graph& g) {
  auto chains = compute_chains(g);
  size_t subtasks = 0;
  for (auto& chain : chains)
    subtasks += static_cast<size_t>(vertex_at(g, chain.front()).parallelism);
  auto out = fmt::format("Job '{}': {}, {}, {}\n", g.name,
                         count_of(g.vertices.size(), "vertex", "vertices"),
                         count_of(chains.size(), "task", "tasks"),
                         count_of(subtasks, "subtask", "subtasks"));
  std::vector<std::vector<std::string>> rows;
  for (size_t i = 0; i < g.vertices.size(); ++i) {
    auto& v = g.vertices[i];
    std::vector<std::string> params;
    for (auto& [key, value] : v.params)
      params.push_back(key + "=" + quote_if_needed(value));
    auto role = vertex_role(g, static_cast<int32_t>(i));
    rows.push_back({v.id, ops::to_string(role), v.op,
                    fmt::format("parallelism {}", v.parallelism),
                    fmt::format("{}", fmt::join(params, " "))});
  }
  out += "Vertices:\n" + table(rows);
  rows.clear();
  for (size_t i = 0; i < chains.size(); ++i) {
    std::vector<std::string> ids;
    for (auto v : chains[i])
      ids.push_back(vertex_at(g, v).id);
    auto parallelism = vertex_at(g, chains[i].front()).parallelism;
    rows.push_back({fmt::format("task {}", i + 1),
                    fmt::format("parallelism {}", parallelism),
                    fmt::format("{}", fmt::join(ids, " -> "))});
  }
  out += "Tasks (operator chains):\n" + table(rows);
  rows.clear();
  for (auto& e : g.edges) {
    auto part = to_string(e.part);
    if (!e.key.empty())
      part += fmt::format(" by ({})", fmt::join(e.key, ", "));
    // The rows on the edge: what its producer emits (once derived), or
    // the side output it takes ("per_user[late]").
    auto& sent = rows_of(g, e);
    auto from = e.output.empty() ? e.from : e.from + "[" + e.output + "]";
    rows.push_back({from + " -> " + e.to, part,
                    sent.empty() ? "" : to_string(sent),
                    is_chained(g, e) ? "chained" : ""});
  }
  out += "Edges:\n" + (rows.empty() ? std::string{"  (none)\n"} : table(rows));
  return out;
}

} // namespace weir
