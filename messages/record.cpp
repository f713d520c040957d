#include "messages/record.hpp"

#include <fmt/format.h>

namespace weir {

bool operator==(const record& a, const record& b) {
  return a.key == b.key && a.is_text == b.is_text && a.timestamp == b.timestamp
         && (a.is_text ? a.text == b.text : a.num == b.num);
}

void append_text_line(std::string& out, const record& r) {
  if (!r.key.empty()) {
    out += r.key;
    out += '\t';
  }
  if (r.is_text) {
    out += r.text;
  } else {
    fmt::format_int digits{r.num};
    out.append(digits.data(), digits.size());
  }
  out += '\n';
}

} // namespace weir
