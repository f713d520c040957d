#pragma once

#include <exception>
#include <string>

#include <caf/error.hpp>

namespace weir {

/// The exit reason of an actor that threw `what`: an errc::crashed error
/// carrying the exception's message, so that supervisors can log why.
[[nodiscard]] caf::error crash_reason(std::exception_ptr what);

/// Makes an uncaught exception end `self` with crash_reason() instead of
/// CAF's bare runtime_error.
template <class Self>
void report_crashes(Self* self) {
  self->set_exception_handler(
    [](std::exception_ptr& what) { return crash_reason(what); });
}

} // namespace weir
