#pragma once

// The bad-input contract of the weir binary, shared by the tests that
// check refusals.

#include <chrono>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "process.hpp"

namespace weir::test {

/// Runs `weir ARGS...` and checks the bad-input contract: exit 2 before the
/// deadline, nothing on stdout, exactly `message` as one line on stderr.
inline void expect_refused(const std::vector<std::string>& args,
                           const std::string& message) {
  auto r = run_weir(args, std::chrono::seconds(30));
  CHECK_FALSE(r.timed_out);
  CHECK(r.exit_code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == message + "\n");
}

} // namespace weir::test
