#pragma once

#include <string>

#include <caf/error.hpp>

#include "messages/errors.hpp"
#include "messages/job_graph.hpp"

namespace weir::ops {
class registry;
} // namespace weir::ops

namespace weir {

/// Where derive_schemas takes a vertex's output schema from.
enum class schema_source {
  /// The registry (ops::registry::output_schema); an operator it does not
  /// know is a problem. The client: its registry holds the job's libraries.
  registry,
  /// The registry, and for an operator it does not know the defaults of
  /// the vertex's role (ops::default_output_schema: a transform passes its
  /// input through). The cluster: user libraries load on the workers only.
  registry_or_defaults,
  /// The outputs the graph holds already (a client derived them): only the
  /// edges are checked, and default keys filled in.
  graph,
};

/// Gives every edge of a shape-checked graph its schema, before anything
/// runs (docs/architecture.md § Schemas). Visits the vertices in
/// topological order:
/// - a vertex's input edges must all carry the same schema (their
///   producers' outputs);
/// - a hash edge without a key gets ["key"] when its producer's schema has
///   a field "key" (today's specs); its key fields must be in that schema
///   and not double; all hash inputs of a vertex use the same key; a key on
///   an edge that is not hash is refused;
/// - the vertex's output is what the operator emits for that input and key
///   (a sink's is empty; one that feeds other vertices must emit some
///   field).
/// Fills vertex_spec::output and edge_spec::key. Returns the first problem
/// (errc::invalid_job) as one line naming the vertex or edge, the field and the types,
/// e.g. "vertex 'j': its inputs differ: 'a' sends (x: int64), 'b' sends
/// (x: string)" or "edge 'a' -> 'b': key field 'usr' is not in (user:
/// string, bytes: int64)".
[[nodiscard]] caf::error
derive_schemas(job_graph& g, const ops::registry& reg,
               schema_source from = schema_source::registry);

/// Whether the graph's schemas were derived: every vertex that feeds others
/// has an output schema. JobGraphs stored or sent before rows have none.
bool has_schemas(const job_graph& g);

/// The cluster's side (the Dispatcher, on submission and recovery): checks
/// the schemas of a graph that has them (schema_source::graph) and derives
/// those of one that has none with the built-in operators
/// (schema_source::registry_or_defaults). Returns the problem
/// (errc::invalid_job), as derive_schemas.
[[nodiscard]] caf::error derive_missing_schemas(job_graph& g);

} // namespace weir
