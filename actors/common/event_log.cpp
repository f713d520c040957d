#include "actors/common/event_log.hpp"

#include <chrono>
#include <ctime>

namespace weir {

namespace {

std::FILE* log_out = nullptr;
std::string log_component;

std::string timestamp() {
  using namespace std::chrono;
  auto now = system_clock::now();
  auto secs = system_clock::to_time_t(now);
  auto ms = duration_cast<milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm utc{};
  gmtime_r(&secs, &utc);
  char buf[32];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:03}Z", buf, ms);
}

} // namespace

void enable_event_log(std::FILE* out, std::string component) {
  log_out = out;
  log_component = std::move(component);
}

std::string bounded_log_line(std::string_view line) {
  if (line.size() <= max_log_line_bytes)
    return std::string{line};
  auto keep = max_log_line_bytes;
  while (keep > 0 && (static_cast<unsigned char>(line[keep]) & 0xC0) == 0x80)
    --keep; // not inside a UTF-8 character
  return fmt::format("{}... [{} bytes cut]", line.substr(0, keep),
                     line.size() - keep);
}

void log_event(std::string_view line) {
  if (log_out == nullptr)
    return;
  // One fwrite per line: lines of concurrent actors never interleave.
  auto text = fmt::format("{} {}: {}\n", timestamp(), log_component,
                          bounded_log_line(line));
  std::fwrite(text.data(), 1, text.size(), log_out);
  std::fflush(log_out);
}

void log_problem(std::string_view line) {
  if (log_out != nullptr) {
    log_event(line);
    return;
  }
  auto text = fmt::format("{}\n", bounded_log_line(line));
  std::fwrite(text.data(), 1, text.size(), stderr);
}

} // namespace weir
