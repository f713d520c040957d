#include "messages/base64.hpp"

#include <cstdint>

namespace weir {

namespace {

constexpr char alphabet[]
  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

} // namespace

std::string base64_encode(std::string_view bytes) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    uint32_t n = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8)
                 | uint8_t(bytes[i + 2]);
    for (int s = 18; s >= 0; s -= 6)
      out += alphabet[(n >> s) & 63];
  }
  if (auto rest = bytes.size() - i; rest > 0) {
    uint32_t n = uint8_t(bytes[i]) << 16;
    if (rest == 2)
      n |= uint8_t(bytes[i + 1]) << 8;
    out += alphabet[(n >> 18) & 63];
    out += alphabet[(n >> 12) & 63];
    out += rest == 2 ? alphabet[(n >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

std::optional<std::string> base64_decode(std::string_view text) {
  if (text.size() % 4 != 0)
    return std::nullopt;
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z')
      return c - 'A';
    if (c >= 'a' && c <= 'z')
      return c - 'a' + 26;
    if (c >= '0' && c <= '9')
      return c - '0' + 52;
    if (c == '+')
      return 62;
    if (c == '/')
      return 63;
    return -1;
  };
  std::string out;
  out.reserve(text.size() / 4 * 3);
  for (size_t i = 0; i < text.size(); i += 4) {
    uint32_t n = 0;
    int pad = 0;
    for (size_t k = 0; k < 4; ++k) {
      auto c = text[i + k];
      if (c == '=' && i + 4 == text.size() && k >= 2) {
        ++pad;
        n <<= 6;
        continue;
      }
      auto v = value(c);
      if (v < 0 || pad > 0)
        return std::nullopt;
      n = (n << 6) | static_cast<uint32_t>(v);
    }
    out += static_cast<char>((n >> 16) & 0xff);
    if (pad < 2)
      out += static_cast<char>((n >> 8) & 0xff);
    if (pad < 1)
      out += static_cast<char>(n & 0xff);
  }
  return out;
}

} // namespace weir
