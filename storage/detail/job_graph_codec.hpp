#pragma once

#include <string>
#include <string_view>

#include <caf/expected.hpp>

#include "messages/job_graph.hpp"

namespace weir::storage::detail {

/// The JSON record of `g`: format_version, id, name, vertices (id, op, params,
/// parallelism, output: the schema's fields as name, type by name, nullable;
/// absent when empty) and edges (from, to, partitioning by name, key: field
/// names; absent when empty). Records written before schemas and keys
/// existed decode with none.
std::string encode_job_graph(const job_graph& g);

/// Reads the record stored under `key` in column job_graphs; errors name the
/// key and the first problem found.
[[nodiscard]] caf::expected<job_graph> decode_job_graph(std::string_view key,
                                          std::string_view value);

} // namespace weir::storage::detail
