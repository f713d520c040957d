#pragma once

#include <cstdio>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace weir {

/// Turns on the event log: one line per significant event (TaskExecutor
/// registered or lost, job submitted, job ended) written to `out`, prefixed
/// with a UTC timestamp and `component`. Off by default, so an embedded
/// cluster stays quiet. Call before the actor system starts.
void enable_event_log(std::FILE* out, std::string component);

/// The file the event log is appended to (`--log FILE`; "": stderr or
/// none), for the REST API's log views.
void set_event_log_path(std::string path);
std::string event_log_path();

/// Longest event line (8 KiB): a longer one is cut at a character
/// boundary and ends with "... [N bytes cut]", so one runaway message (a
/// huge exception text from user code) cannot flood the log.
constexpr size_t max_log_line_bytes = 8192;

/// `line` cut to max_log_line_bytes as the log writes it.
std::string bounded_log_line(std::string_view line);

/// Writes one event line if the log is on. Thread-safe.
void log_event(std::string_view line);

/// Formats and writes one event line if the log is on.
template <class... Ts>
void log_eventf(fmt::format_string<Ts...> format, Ts&&... xs) {
  log_event(fmt::format(format, std::forward<Ts>(xs)...));
}

/// Writes one line about a problem (a failed recovery or registration): to
/// the event log if it is on, else to stderr as it is, so that an embedded
/// cluster does not lose it. Thread-safe.
void log_problem(std::string_view line);

/// Formats and writes one problem line (log_problem).
template <class... Ts>
void log_problemf(fmt::format_string<Ts...> format, Ts&&... xs) {
  log_problem(fmt::format(format, std::forward<Ts>(xs)...));
}

} // namespace weir
