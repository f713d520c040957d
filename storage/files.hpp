#pragma once

#include <string>

#include <caf/expected.hpp>

namespace weir::storage {

/// The whole file at `path`, or an error naming it.
caf::expected<std::string> read_whole_file(const std::string& path);

} // namespace weir::storage
