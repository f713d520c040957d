#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "messages/job_graph.hpp"

namespace weir::ops {
enum class role; // operators/registry.hpp
} // namespace weir::ops

namespace weir {

/// The role the vertex at `index` plays: no inputs → source, no outputs →
/// sink, otherwise transform.
ops::role vertex_role(const job_graph& g, int32_t index);

/// Whether `e` joins its two vertices into one chain (one task), as in Flink:
/// a `forward` edge between equal parallelisms where the upstream vertex has
/// exactly one output and the downstream vertex exactly one input.
bool is_chained(const job_graph& g, const edge_spec& e);

/// The operator chains of a shape-checked graph: vertex indices per chain,
/// upstream first; chains ordered by the topological position of their first
/// vertex. Every vertex is in exactly one chain.
std::vector<std::vector<int32_t>> compute_chains(const job_graph& g);

/// Human-readable plan for `weir info`: vertices in declaration order (role,
/// operator, parallelism, parameters), tasks (operator chains) and edges
/// (partitioning with its key, the schema of their rows, whether chained).
std::string describe_plan(const job_graph& g);

} // namespace weir
