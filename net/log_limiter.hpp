#pragma once

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>

#include <fmt/format.h>

namespace weir {

/// Lets one line through per interval and counts the others, so that a
/// peer that repeats what is refused (a connection, a registration) cannot
/// flood the log: the next line that gets through says how many were held
/// back. Plain logic; the caller serializes calls.
class log_limiter {
public:
  using clock = std::chrono::steady_clock;

  explicit log_limiter(clock::duration interval = std::chrono::seconds{1})
    : interval_(interval) {
  }

  /// The line to write now, or nothing when one was written less than an
  /// interval ago.
  std::optional<std::string> admit(const std::string& line,
                                   clock::time_point now = clock::now()) {
    if (written_ && now - last_ < interval_) {
      ++held_back_;
      return std::nullopt;
    }
    written_ = true;
    last_ = now;
    auto held = held_back_;
    held_back_ = 0;
    if (held == 0)
      return line;
    return fmt::format("{} ({} more like it in the last {} ms)", line, held,
                       std::chrono::duration_cast<std::chrono::milliseconds>(
                         interval_)
                         .count());
  }

private:
  clock::duration interval_;
  clock::time_point last_{};
  bool written_ = false;
  size_t held_back_ = 0;
};

} // namespace weir
