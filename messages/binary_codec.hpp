#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace weir {

/// The byte format of checkpointed state and checkpoint files: little-endian
/// 64-bit integers and length-prefixed strings, appended to one string.
inline void append_int64(std::string& out, int64_t x) {
  auto u = static_cast<uint64_t>(x);
  for (int i = 0; i < 8; ++i)
    out.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
}

inline void append_text(std::string& out, std::string_view s) {
  append_int64(out, static_cast<int64_t>(s.size()));
  out.append(s.data(), s.size());
}

/// Reads what append_int64/append_text wrote. A short or malformed input
/// clears `ok` (and later reads return zero or "").
struct binary_reader {
  const std::string& in;
  size_t pos = 0;
  bool ok = true;

  int64_t int64() {
    if (!ok || in.size() - pos < 8) {
      ok = false;
      return 0;
    }
    uint64_t u = 0;
    for (int i = 0; i < 8; ++i)
      u |= static_cast<uint64_t>(static_cast<unsigned char>(in[pos + i]))
           << (8 * i);
    pos += 8;
    return static_cast<int64_t>(u);
  }

  std::string text() {
    auto n = int64();
    if (!ok || n < 0 || in.size() - pos < static_cast<size_t>(n)) {
      ok = false;
      return {};
    }
    auto s = in.substr(pos, static_cast<size_t>(n));
    pos += static_cast<size_t>(n);
    return s;
  }

  /// Whether everything was read, and read well.
  bool done() const { return ok && pos == in.size(); }
};

} // namespace weir
