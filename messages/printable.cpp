#include "messages/printable.hpp"

#include <fmt/format.h>

namespace weir {

std::string printable(std::string_view bytes) {
  std::string out;
  out.reserve(bytes.size());
  for (auto ch : bytes) {
    auto byte = static_cast<unsigned char>(ch);
    if (byte >= 0x20 && byte < 0x7f && byte != '\\')
      out += ch;
    else
      out += fmt::format("\\x{:02x}", byte);
  }
  return out;
}

} // namespace weir
