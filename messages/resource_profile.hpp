#pragma once

// Part of the installed public surface: job results name the profile of
// the slots a job ran in (docs/cpp-api.md § Reference).

#include <cstdint>
#include <string>

#include <caf/meta/type_name.hpp>

namespace weir {

/// Resources of a slot or asked for by a slot request, as Flink's
/// ResourceProfile. A zero field means "unknown": a request with zeros
/// matches any slot.
struct resource_profile {
  double cpu_cores = 0;
  int64_t heap_mb = 0;
  int64_t direct_mb = 0;
  int64_t native_mb = 0;

  /// Whether a slot with this profile satisfies `request`.
  bool satisfies(const resource_profile& request) const;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, resource_profile& x) {
  return f(caf::meta::type_name("resource_profile"), x.cpu_cores, x.heap_mb,
           x.direct_mb, x.native_mb);
}

bool operator==(const resource_profile& a, const resource_profile& b);
std::string to_string(const resource_profile& x);

} // namespace weir
