#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

namespace weir::state {

/// How values of type T are stored as bytes (in snapshots, and in the
/// RocksDB backend). Specialize for other types.
template <class T>
struct codec;

template <>
struct codec<int64_t> {
  static std::string encode(int64_t x) {
    std::string out(8, '\0');
    // Big endian, sign bit flipped: byte order is numeric order (map keys).
    auto u = static_cast<uint64_t>(x) ^ (uint64_t{1} << 63);
    for (int i = 0; i < 8; ++i)
      out[static_cast<size_t>(i)] = static_cast<char>((u >> (56 - 8 * i)) & 0xff);
    return out;
  }
  static int64_t decode(std::string_view bytes) {
    if (bytes.size() != 8)
      throw std::runtime_error("an integer state value is not 8 bytes");
    uint64_t u = 0;
    for (unsigned char c : bytes)
      u = (u << 8) | c;
    return static_cast<int64_t>(u ^ (uint64_t{1} << 63));
  }
};

template <>
struct codec<std::string> {
  static std::string encode(const std::string& x) { return x; }
  static std::string decode(std::string_view bytes) {
    return std::string{bytes};
  }
};

} // namespace weir::state
