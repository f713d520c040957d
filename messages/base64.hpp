#pragma once

// Base64 (RFC 4648, with padding): bytes inside JSON, such as etcd's keys
// and values and the row batches of collected results.

#include <optional>
#include <string>
#include <string_view>

namespace weir {

/// Base64 of `bytes`.
std::string base64_encode(std::string_view bytes);

/// The bytes of base64 `text`; nothing when it is not base64.
std::optional<std::string> base64_decode(std::string_view text);

} // namespace weir
