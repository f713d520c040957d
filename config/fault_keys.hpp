#pragma once

// The test hooks' keys (weir.fault.*), in a build with them only: a build
// without them refuses the keys as unknown (docs/operations.md § Test
// hooks). Where a hook reads its key, include this.

#include "config/build_features.hpp"
#include "config/keys.hpp"

namespace weir::keys {

#if WEIR_FAULT_INJECTION
inline constexpr config_key<int64_t> fault_jobmaster_crashes{
  "weir.fault.jobmaster-crashes", "0",
  "Test hook (builds with -Dfault_injection=true only): the first N "
  "JobMasters of the job crash once the job is deployed. Per job.",
  {"0", "1000"}, per_job};
inline constexpr config_key<bool> fault_dispatcher_crash{
  "weir.fault.dispatcher-crash", "false",
  "Test hook (builds with -Dfault_injection=true only): the "
  "Dispatcher crashes once the job's result is stored and the clients "
  "waiting for it are answered. Per job.",
  {}, per_job};
#endif

} // namespace weir::keys
