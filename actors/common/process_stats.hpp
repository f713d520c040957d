#pragma once

#include <cstdint>

#include "messages/slots.hpp"

namespace weir {

/// This process's use of the host, read from /proc/self (zeros where it
/// cannot be read).
struct process_usage {
  int64_t rss_bytes = 0;     ///< resident set size
  double cpu_seconds = 0;    ///< user and system time since it started
};

/// Reads /proc/self/statm and /proc/self/stat.
process_usage read_process_usage();

/// The host's cores, physical and available memory (/proc/meminfo);
/// `managed_bytes` is passed through.
hardware_description describe_hardware(int64_t managed_bytes);

} // namespace weir
