#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

namespace weir::state {

/// How values of type T are stored as bytes (in snapshots, and in the
/// RocksDB backend): `append(out, v)` adds v's bytes to `out`, `decode`
/// reads them back (throwing std::runtime_error on malformed bytes).
/// Specialize for other types.
template <class T>
struct codec;

/// The bytes of `v`.
template <class T>
std::string encode(const T& v) {
  std::string out;
  codec<T>::append(out, v);
  return out;
}

template <>
struct codec<int64_t> {
  static void append(std::string& out, int64_t x) {
    // Big endian, sign bit flipped: byte order is numeric order (map keys).
    auto u = static_cast<uint64_t>(x) ^ (uint64_t{1} << 63);
    for (int i = 0; i < 8; ++i)
      out.push_back(static_cast<char>((u >> (56 - 8 * i)) & 0xff));
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
  static void append(std::string& out, const std::string& x) { out += x; }
  static std::string decode(std::string_view bytes) {
    return std::string{bytes};
  }
};

} // namespace weir::state
