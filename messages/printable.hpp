#pragma once

#include <string>
#include <string_view>

namespace weir {

/// `bytes` with every byte outside printable ASCII (and the backslash)
/// escaped as `\xNN`, so that it fits in a one-line message.
std::string printable(std::string_view bytes);

} // namespace weir
