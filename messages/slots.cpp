#include "messages/slots.hpp"

#include <fmt/format.h>

namespace weir {

bool resource_profile::satisfies(const resource_profile& request) const {
  auto fits = [](auto have, auto want) { return want == 0 || have >= want; };
  return fits(cpu_cores, request.cpu_cores) && fits(heap_mb, request.heap_mb)
         && fits(direct_mb, request.direct_mb)
         && fits(native_mb, request.native_mb);
}

bool operator==(const resource_profile& a, const resource_profile& b) {
  return a.cpu_cores == b.cpu_cores && a.heap_mb == b.heap_mb
         && a.direct_mb == b.direct_mb && a.native_mb == b.native_mb;
}

bool operator==(const hardware_description& a,
                const hardware_description& b) {
  return a.cpu_cores == b.cpu_cores && a.physical_memory == b.physical_memory
         && a.free_memory == b.free_memory
         && a.managed_memory == b.managed_memory;
}

std::string to_string(const resource_profile& x) {
  return fmt::format("cpu={} heap={}MB direct={}MB native={}MB", x.cpu_cores,
                     x.heap_mb, x.direct_mb, x.native_mb);
}

} // namespace weir
