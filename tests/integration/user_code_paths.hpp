#pragma once

// Where the integration tests find user libraries (set by meson).

#include <cstdlib>
#include <string>

#include <fmt/format.h>

namespace weir::test {

/// examples/user_code's operator library.
inline std::string example_ops() {
  return std::getenv("WEIR_EXAMPLE_OPS");
}

/// examples/user_code's driver library.
inline std::string example_driver() {
  return std::getenv("WEIR_EXAMPLE_DRIVER");
}

/// A library of tests/integration/plugins, e.g. "drivers".
inline std::string test_plugin(const std::string& name) {
  return fmt::format("{}/libweir_test_{}.so",
                     std::getenv("WEIR_TEST_PLUGIN_DIR"), name);
}

} // namespace weir::test
