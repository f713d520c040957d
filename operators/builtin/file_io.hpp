#pragma once

#include <string>

namespace weir::ops {

/// Writes all of `buf` to `fd` (retrying short writes and EINTR); throws
/// operator_error "cannot write '<path>': <reason>".
void write_fully(int fd, const std::string& buf, const std::string& path);

} // namespace weir::ops
