#pragma once

#include <cstdint>
#include <string>

#include <caf/meta/type_name.hpp>

namespace weir {

/// One log file of a process (Flink's LogInfo): its name, size in bytes
/// and last modification (wall clock, ms).
struct log_file {
  std::string name;
  int64_t size = 0;
  int64_t mtime_ms = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, log_file& x) {
  return f(caf::meta::type_name("log_file"), x.name, x.size, x.mtime_ms);
}

/// Most bytes of a log file one message carries (a file is read in
/// pieces, so a large log never makes one large message).
constexpr int64_t log_piece_bytes = 256 * 1024;

} // namespace weir
