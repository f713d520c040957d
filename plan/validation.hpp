#pragma once

#include <string>

#include <caf/error.hpp>

#include "messages/job_graph.hpp"

namespace weir::ops {
class registry;
enum class file_checks; // operators/registry.hpp
} // namespace weir::ops

namespace weir {

/// How a vertex is named in a validation error.
enum class vertex_naming {
  /// "vertices[2] ('counts')": its position in the job spec, for the spec's
  /// author (the client).
  by_position,
  /// "vertex 'counts'": its id (the Dispatcher, which has no spec).
  by_id,
};

/// Where a JobGraph is validated: the client before submitting, the
/// Dispatcher before storing it.
struct validation_options {
  /// The operators vertices may use; nullptr: the built-in ones.
  const ops::registry* operators = nullptr;
  /// Whether input files and output directories must exist on this host.
  ops::file_checks files{}; // on
  vertex_naming naming = vertex_naming::by_id;
};

/// The one validation of a JobGraph, in this order: its configuration keys
/// (configuration::apply, check_job_config), its shape
/// (check_job_graph_shape), its libraries' and files' names and hashes
/// (check_user_code), and each vertex's operator and parameters
/// against the registry for the vertex's role (vertex_role). An operator
/// the registry lacks is left to the workers when the job brings user code.
/// Returns none, `errc::invalid_config` for its `config`, or
/// `errc::invalid_job`; the context is one line naming the problem.
[[nodiscard]] caf::error validate_job_graph(const job_graph& g,
                              const validation_options& opts);

/// The client's options: the given operators (nullptr: built-in), files
/// checked, vertices named by position.
validation_options client_validation(const ops::registry* operators);

/// The Dispatcher's options: built-in operators, no file checks (its jobs
/// run on other hosts), vertices named by id.
validation_options dispatcher_validation();

} // namespace weir
