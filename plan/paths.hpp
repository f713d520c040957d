#pragma once

#include <functional>
#include <string>

#include <caf/error.hpp>

#include "messages/job_graph.hpp"

namespace weir::ops {
class registry;
enum class file_checks; // operators/registry.hpp
} // namespace weir::ops

namespace weir {

/// Makes the relative path parameters of `g`'s vertices (an operator's
/// `path_params`, "-" excepted) absolute against this process's working
/// directory: the client checks files where it runs, and a worker of a
/// session cluster must open the same ones whatever its own directory.
void make_paths_absolute(job_graph& g, const ops::registry& operators);

/// A sink that would write over a source's input: the same path, the same
/// file through another name (symbolic or hard link: compared by device and
/// inode, with `files` on and the files existing) or the input inside the
/// output directory. Returns none or `errc::invalid_job` with one line
/// naming both vertices; `vertex_name` names a vertex by its index.
[[nodiscard]] caf::error
check_output_paths(const job_graph& g, const ops::registry& operators,
                   ops::file_checks files,
                   const std::function<std::string(size_t)>& vertex_name);

} // namespace weir
