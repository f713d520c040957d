#include "actors/common/process_stats.hpp"

#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <thread>

namespace weir {

namespace {

/// A field of /proc/meminfo in bytes ("MemAvailable:   123 kB"), 0 if absent.
int64_t meminfo_bytes(const std::string& field) {
  std::ifstream in{"/proc/meminfo"};
  std::string name;
  int64_t kb = 0;
  std::string unit;
  while (in >> name >> kb) {
    std::getline(in, unit);
    if (name == field + ":")
      return kb * 1024;
  }
  return 0;
}

} // namespace

process_usage read_process_usage() {
  process_usage out;
  auto page = ::sysconf(_SC_PAGESIZE);
  std::ifstream statm{"/proc/self/statm"};
  int64_t size = 0;
  int64_t resident = 0;
  if (statm >> size >> resident)
    out.rss_bytes = resident * page;
  std::ifstream stat{"/proc/self/stat"};
  std::string line;
  std::getline(stat, line);
  // The command name (field 2) may hold spaces: fields count from its ")".
  auto close = line.rfind(')');
  if (close == std::string::npos)
    return out;
  std::istringstream fields{line.substr(close + 2)};
  std::string skip;
  for (int i = 3; i < 14; ++i) // state .. cmajflt
    fields >> skip;
  int64_t utime = 0;
  int64_t stime = 0;
  if (fields >> utime >> stime)
    out.cpu_seconds = static_cast<double>(utime + stime)
                      / static_cast<double>(::sysconf(_SC_CLK_TCK));
  return out;
}

hardware_description describe_hardware(int64_t managed_bytes) {
  hardware_description hw;
  hw.cpu_cores = static_cast<int32_t>(std::thread::hardware_concurrency());
  hw.physical_memory = static_cast<int64_t>(::sysconf(_SC_PHYS_PAGES))
                       * ::sysconf(_SC_PAGESIZE);
  hw.free_memory = meminfo_bytes("MemAvailable");
  hw.managed_memory = managed_bytes;
  return hw;
}

} // namespace weir
