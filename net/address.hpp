#pragma once

#include <string>

namespace weir::net {

/// Whether `address` is reachable from this host only: 127.0.0.0/8, ::1 or
/// "localhost". Anything else is not, "0.0.0.0", "::" and "" (every
/// address) included.
bool is_loopback_address(const std::string& address);

} // namespace weir::net
