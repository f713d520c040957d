#pragma once

#include <cstdio>
#include <string>

#include <cxxopts.hpp>

namespace weir::cli {

/// Turns on the event log of `component` for an action with a `--log FILE`
/// flag: appended to FILE when the flag is given, else written to
/// `fallback` (nullptr: the log stays off). False, after one line on stderr
/// ("ACTION: --log: cannot open 'FILE': REASON"), when FILE cannot be
/// opened. `weir run`, `weir jobmanager` and `weir taskmanager` share it.
bool start_event_log(const cxxopts::ParseResult& flags,
                     const std::string& action, std::string component,
                     std::FILE* fallback);

} // namespace weir::cli
