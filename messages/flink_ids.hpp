#pragma once

// Flink's 32-hexadecimal ids for what weir names: a job's vertices (Flink's
// JobVertexID) and the TaskExecutors (ResourceID), as its REST API and
// metrics show them (docs/operations.md § REST API). Each is a hash of
// the name, so it is the same on every jobmanager and after restarts.

#include <string>

#include "messages/ids.hpp"

namespace weir {

/// The id of vertex `vertex` of job `job`.
std::string flink_vertex_id(const job_id& job, const std::string& vertex);

/// The id of the TaskExecutor named `worker`.
std::string flink_resource_id(const resource_id& worker);

} // namespace weir
