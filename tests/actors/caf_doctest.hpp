#pragma once

// Bridges CAF's deterministic test DSL (caf/test/dsl.hpp) to doctest: CAF's
// check macros become doctest checks. A failed CAF_REQUIRE must not throw out
// of the DSL's destructors, so it records the failure and aborts, as CAF's own
// runner does.

#include <cstdlib>

#include <doctest/doctest.h>

#include <caf/test/unit_test.hpp>

#undef CAF_CHECK
#undef CAF_CHECK_EQUAL
#undef CAF_REQUIRE
#undef CAF_REQUIRE_EQUAL
#undef CAF_FAIL
#undef CAF_MESSAGE

#define CAF_CHECK(...) CHECK(__VA_ARGS__)
#define CAF_CHECK_EQUAL(x, y) CHECK((x) == (y))
#define CAF_MESSAGE(msg) MESSAGE(msg)
#define CAF_FAIL(msg)                                                          \
  do {                                                                         \
    FAIL_CHECK(msg);                                                           \
    std::abort();                                                              \
  } while (false)
#define CAF_REQUIRE(...)                                                       \
  do {                                                                         \
    if (!(__VA_ARGS__))                                                        \
      CAF_FAIL("requirement failed: " #__VA_ARGS__);                           \
  } while (false)
#define CAF_REQUIRE_EQUAL(x, y) CAF_REQUIRE((x) == (y))

#include <caf/test/dsl.hpp>

#include "messages/type_ids.hpp"

namespace weir::test {

/// An actor system config with weir's message types.
struct weir_config : caf::actor_system_config {
  weir_config() {
    weir::add_message_types(*this);
  }
};

/// The deterministic fixture every actor test uses: a test scheduler with a
/// fake clock, `run()`, `expect(...)`, `self`.
using actor_fixture = test_coordinator_fixture<weir_config>;

/// Sends `f`'s test actor's request `xs...` to `h`, runs everything, and
/// returns the error it fails with (its reply would be a `T`).
template <class T, class Fixture, class Handle, class... Ts>
caf::error error_of(Fixture& f, const Handle& h, Ts... xs) {
  caf::error result;
  auto reply = f.self->request(h, caf::infinite, std::move(xs)...);
  f.run();
  reply.receive([](T&) {}, [&](caf::error& e) { result = e; });
  return result;
}

} // namespace weir::test
