// The single-thread limit for the log example (examples/log_bytes.json): the bytes of every
// request with status >= MIN_STATUS, summed per user, from an access log of lines
//   2026-11-30T10:00:01Z user42 GET /index.html 200 512
// Plain C++17, no framework: the file is read with fread into a large buffer, each line is split
// on blanks by hand, and the sums live in a hash map keyed by the user's name.
//
// Lines are kept or skipped as the job's parse operator (format whitespace, on_error skip) keeps
// or skips them for what the job uses: a line must have 6 fields and an integer status and
// bytes, else it is skipped. The time, method and path are not looked at (the job parses the time
// into a timestamp; nothing reads it, so its cost is not part of the limit).
//
// Build: g++ -O2 -std=c++17 log_bytes.cpp -o log_bytes
// Run:   ./log_bytes FILE [SUMS_OUT] [MIN_STATUS]
// Prints one JSON line (bytes, lines, kept, skipped, users, seconds, mb_per_s with MB = 10^6
// bytes); SUMS_OUT, if given, gets "user<TAB>bytes" lines, as the job's text_file sink writes.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace {

bool is_blank(char c) { return c == ' ' || c == '\t'; }

// An optional sign and one or more digits, nothing else; false otherwise (or on overflow).
bool parse_int(std::string_view s, int64_t& out) {
  size_t i = 0;
  bool negative = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    negative = s[0] == '-';
    i = 1;
  }
  if (i == s.size())
    return false;
  uint64_t v = 0;
  for (; i < s.size(); ++i) {
    unsigned d = static_cast<unsigned char>(s[i]) - '0';
    if (d > 9 || v > (UINT64_MAX - d) / 10)
      return false;
    v = v * 10 + d;
  }
  if (v > static_cast<uint64_t>(INT64_MAX) + (negative ? 1 : 0))
    return false;
  out = negative ? static_cast<int64_t>(0 - v) : static_cast<int64_t>(v);
  return true;
}

struct totals {
  std::unordered_map<std::string, int64_t> sums;
  std::string key; // reused: a short user name stays in its small-string buffer
  int64_t lines = 0, kept = 0, skipped = 0;
  int64_t min_status = 400;

  void line(const char* p, const char* end) {
    ++lines;
    std::string_view f[6];
    int n = 0;
    while (p != end && is_blank(*p))
      ++p;
    while (p != end) {
      const char* start = p;
      while (p != end && !is_blank(*p))
        ++p;
      if (n == 6) { // a seventh field
        ++skipped;
        return;
      }
      f[n++] = {start, static_cast<size_t>(p - start)};
      while (p != end && is_blank(*p))
        ++p;
    }
    int64_t status = 0, bytes = 0;
    if (n != 6 || !parse_int(f[4], status) || !parse_int(f[5], bytes)) {
      ++skipped; // a blank line too: no fields, where the schema has 6
      return;
    }
    if (status < min_status)
      return;
    ++kept;
    key.assign(f[1].data(), f[1].size());
    sums[key] += bytes;
  }
};

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: log_bytes FILE [SUMS_OUT] [MIN_STATUS]\n");
    return 2;
  }
  auto t0 = std::chrono::steady_clock::now();
  std::FILE* in = std::fopen(argv[1], "rb");
  if (in == nullptr) {
    std::perror(argv[1]);
    return 2;
  }
  totals t;
  if (argc > 3)
    t.min_status = std::strtoll(argv[3], nullptr, 10);
  t.sums.reserve(1 << 15);
  constexpr size_t chunk = 4 << 20;
  std::vector<char> buf(chunk + 1);
  size_t held = 0; // bytes of an unfinished line at the buffer's start
  int64_t total = 0;
  for (;;) {
    if (held == buf.size() - 1)
      buf.resize(buf.size() * 2); // a line longer than the buffer
    size_t got = std::fread(buf.data() + held, 1, buf.size() - 1 - held, in);
    total += static_cast<int64_t>(got);
    size_t filled = held + got;
    const char* p = buf.data();
    const char* end = buf.data() + filled;
    for (;;) {
      const char* nl = static_cast<const char*>(std::memchr(p, '\n', end - p));
      if (nl == nullptr)
        break;
      const char* e = nl != p && nl[-1] == '\r' ? nl - 1 : nl; // as text_file reads lines
      t.line(p, e);
      p = nl + 1;
    }
    held = static_cast<size_t>(end - p);
    if (got == 0) {
      if (held > 0)
        t.line(p, end); // a last line without a newline
      break;
    }
    std::memmove(buf.data(), p, held);
  }
  if (std::ferror(in)) {
    std::perror(argv[1]);
    return 2;
  }
  std::fclose(in);
  double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("{\"bytes\":%lld,\"lines\":%lld,\"kept\":%lld,\"skipped\":%lld,\"users\":%zu,"
              "\"seconds\":%.4f,\"mb_per_s\":%.1f}\n",
              (long long)total, (long long)t.lines, (long long)t.kept, (long long)t.skipped,
              t.sums.size(), s, total / 1e6 / s);
  if (argc > 2) {
    std::FILE* out = std::fopen(argv[2], "w");
    if (out == nullptr) {
      std::perror(argv[2]);
      return 2;
    }
    for (auto& kv : t.sums)
      std::fprintf(out, "%s\t%lld\n", kv.first.c_str(), (long long)kv.second);
    std::fclose(out);
  }
  return 0;
}
