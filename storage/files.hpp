#pragma once

#include <string>

#include <caf/expected.hpp>

namespace weir::storage {

/// The whole file at `path`, or an error naming it.
caf::expected<std::string> read_whole_file(const std::string& path);

/// The temporary name write_durably() writes `path` under.
std::string temporary_name(const std::string& path);

/// Writes `bytes` to `path` durably: to temporary_name(path), fsync,
/// rename. On a failure the file at `path` is unchanged and the error
/// names the file.
caf::error write_durably(const std::string& path, const std::string& bytes);

} // namespace weir::storage
