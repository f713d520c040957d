#pragma once

// How a key's aggregate is kept in keyed state: the keyed aggregations'
// and the windows' shared codec.

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <string_view>

#include "operators/builtin/aggregation.hpp"
#include "storage/state/codec.hpp"

namespace weir::state {

// 16 bytes (value, event time) for int64 aggregates, as before rows, so
// their savepoints restore; 32 bytes (int, double, count, event time) for
// the others.
template <>
struct codec<ops::aggregate> {
  static void append(std::string& out, const ops::aggregate& a) {
    bool simple = a.d == 0 && a.count == 1;
    codec<int64_t>::append(out, a.i);
    if (!simple) {
      int64_t bits = 0;
      std::memcpy(&bits, &a.d, 8);
      codec<int64_t>::append(out, bits);
      codec<int64_t>::append(out, a.count);
    }
    codec<int64_t>::append(out, a.timestamp);
  }
  static ops::aggregate decode(std::string_view bytes) {
    ops::aggregate a;
    if (bytes.size() == 16) {
      a.i = codec<int64_t>::decode(bytes.substr(0, 8));
      a.timestamp = codec<int64_t>::decode(bytes.substr(8));
      a.count = 1;
      return a;
    }
    if (bytes.size() != 32)
      throw std::runtime_error(
        "an aggregate in keyed state is neither 16 nor 32 bytes");
    a.i = codec<int64_t>::decode(bytes.substr(0, 8));
    auto bits = codec<int64_t>::decode(bytes.substr(8, 8));
    std::memcpy(&a.d, &bits, 8);
    a.count = codec<int64_t>::decode(bytes.substr(16, 8));
    a.timestamp = codec<int64_t>::decode(bytes.substr(24));
    return a;
  }
};

} // namespace weir::state
