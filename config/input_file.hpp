#pragma once

#include <cstddef>
#include <string>

namespace weir {

/// The largest job spec or configuration file weir reads (64 MiB): far
/// above any real one, low enough that a wrong file cannot fill memory.
constexpr size_t max_input_file_bytes = size_t{64} << 20;

/// A whole input file, or why it could not be read.
struct input_file {
  std::string text;
  /// "" when read; else the reason: "No such file or directory", "not a
  /// regular file (a FIFO)", "larger than 64 MiB", ...
  std::string problem;
};

/// Reads a job spec or configuration file. Only regular files: a directory,
/// a FIFO (which would block until a writer comes) or a device such as
/// /dev/zero (which never ends) is refused without reading from it.
input_file read_input_file(const std::string& path);

/// "" when `path` is a regular file or does not exist (the caller reports
/// that); else why it is no input file: "not a regular file (a FIFO)".
std::string special_file_problem(const std::string& path);

} // namespace weir
