#include "actors/common/event_log.hpp"
#include "actors/common/signal_log.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>

#include <time.h>
#include <unistd.h>

namespace weir {

namespace {

std::FILE* log_out = nullptr;
std::string log_component;
std::string log_path;

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

void set_event_log_path(std::string path) {
  log_path = std::move(path);
}

std::string event_log_path() {
  return log_path;
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

namespace {

/// Appends `n` as `width` digits at `out`; the position after them.
char* put_digits(char* out, long n, int width) {
  for (int i = width - 1; i >= 0; --i) {
    out[i] = static_cast<char>('0' + n % 10);
    n /= 10;
  }
  return out + width;
}

char* put_text(char* out, const char* end, const char* text) {
  while (*text != '\0' && out < end)
    *out++ = *text++;
  return out;
}

} // namespace

void log_event_from_signal_handler(const char* line) noexcept {
  if (log_out == nullptr)
    return;
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  // The civil date of a day number (days since 1970-01-01), by hand:
  // gmtime_r is not async-signal-safe.
  long days = now.tv_sec / 86400;
  long secs = now.tv_sec % 86400;
  long z = days + 719468;
  long era = z / 146097;
  long doe = z - era * 146097;
  long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  long mp = (5 * doy + 2) / 153;
  long day = doy - (153 * mp + 2) / 5 + 1;
  long month = mp < 10 ? mp + 3 : mp - 9;
  long year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  char buf[512];
  char* end = buf + sizeof(buf) - 1;
  char* p = put_digits(buf, year, 4);
  *p++ = '-';
  p = put_digits(p, month, 2);
  *p++ = '-';
  p = put_digits(p, day, 2);
  *p++ = 'T';
  p = put_digits(p, secs / 3600, 2);
  *p++ = ':';
  p = put_digits(p, secs / 60 % 60, 2);
  *p++ = ':';
  p = put_digits(p, secs % 60, 2);
  *p++ = '.';
  p = put_digits(p, now.tv_nsec / 1000000, 3);
  p = put_text(p, end, "Z ");
  p = put_text(p, end, log_component.c_str());
  p = put_text(p, end, ": ");
  p = put_text(p, std::min(end, p + 400), line);
  *p++ = '\n';
  [[maybe_unused]] auto n = ::write(fileno(log_out), buf,
                                    static_cast<size_t>(p - buf));
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
