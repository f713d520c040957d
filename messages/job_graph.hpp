#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "messages/ids.hpp"

namespace weir {

/// Largest parallelism a vertex may ask for (Flink's upper bound for max
/// parallelism, 2^15).
constexpr int32_t max_parallelism = 32768;

/// How records move along an edge from producer subtasks to consumer subtasks.
enum class partitioning : uint8_t {
  forward,   ///< subtask i → subtask i; needs equal parallelism
  hash,      ///< by key hash, so one key always reaches one consumer
  rebalance, ///< round-robin over all consumers
  broadcast, ///< every record to every consumer
};

std::string to_string(partitioning x);
std::optional<partitioning> parse_partitioning(std::string_view text);

/// One operator of a job: an id unique in the job, the operator's registered
/// name, its parameters (already resolved: no `${...}` left) and parallelism.
struct vertex_spec {
  std::string id;
  std::string op;
  std::map<std::string, std::string> params;
  int32_t parallelism = 1;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, vertex_spec& x) {
  return f(caf::meta::type_name("vertex_spec"), x.id, x.op, x.params,
           x.parallelism);
}

bool operator==(const vertex_spec& a, const vertex_spec& b);

/// A directed connection between two vertices.
struct edge_spec {
  std::string from;
  std::string to;
  partitioning part = partitioning::forward;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, edge_spec& x) {
  return f(caf::meta::type_name("edge_spec"), x.from, x.to, x.part);
}

bool operator==(const edge_spec& a, const edge_spec& b);

/// What a client submits: a DAG of operators. Every vertex has its final
/// parallelism; the graph has been validated by `validate_job_graph`.
struct job_graph {
  job_id id;
  std::string name;
  std::vector<vertex_spec> vertices;
  std::vector<edge_spec> edges;
  /// The job's own configuration keys (e.g. restart-strategy.*), on top of
  /// the cluster's.
  std::map<std::string, std::string> config;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_graph& x) {
  return f(caf::meta::type_name("job_graph"), x.id, x.name, x.vertices,
           x.edges, x.config);
}

bool operator==(const job_graph& a, const job_graph& b);

/// Index of the vertex named `id`, or -1.
int32_t vertex_index(const job_graph& g, std::string_view id);

/// Checks the graph's shape: unique vertex ids, edges between existing
/// vertices, no cycle, parallelism in [1, max_parallelism], `forward` only
/// between equal parallelisms, at least one source. Returns the first problem
/// as one line naming the vertex or edge, or an empty string when the graph is
/// well-formed. Operator names and parameters are checked by the registry.
std::string check_job_graph_shape(const job_graph& g);

/// Vertex indices in topological order (sources first). Assumes no cycle.
std::vector<int32_t> topological_order(const job_graph& g);

} // namespace weir
