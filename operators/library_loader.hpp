#pragma once

#include <string>
#include <vector>

#include "operators/registry.hpp"

namespace weir::ops {

/// The built-in operators plus those (and the drivers) of the user
/// libraries at `paths`, loaded with dlopen in this order. Libraries stay
/// loaded for the life of the process; the registry of one list of paths
/// is built once. Throws operator_error naming the file (and symbol) when a
/// library does not load, is not a weir library, was built against another
/// API version, or registers an operator or driver that another library
/// of the list already has. Thread-safe.
const registry& registry_for(const std::vector<std::string>& paths);

} // namespace weir::ops
