#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "messages/data_frame.hpp"
#include "messages/ids.hpp"
#include "messages/resource_profile.hpp"

namespace weir {

/// One slot of a TaskExecutor as it reports it: free when `alloc` is nil.
struct slot_status {
  int32_t index = 0;
  resource_profile profile;
  allocation_id alloc;
  job_id job;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, slot_status& x) {
  return f(caf::meta::type_name("slot_status"), x.index, x.profile, x.alloc,
           x.job);
}

/// A worker's host as it registers (Flink's HardwareDescription; bytes).
struct hardware_description {
  int32_t cpu_cores = 0;
  int64_t physical_memory = 0;
  /// Memory available on the host when it registered (MemAvailable).
  int64_t free_memory = 0;
  /// taskmanager.memory.managed.size.
  int64_t managed_memory = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, hardware_description& x) {
  return f(caf::meta::type_name("hardware_description"), x.cpu_cores,
           x.physical_memory, x.free_memory, x.managed_memory);
}

bool operator==(const hardware_description& a, const hardware_description& b);

/// A TaskExecutor's slots and host, sent when it registers.
struct slot_report {
  std::vector<slot_status> slots;
  hardware_description hardware;
  /// Its data port (port 0: none; its batches travel as messages).
  data_endpoint data;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, slot_report& x) {
  return f(caf::meta::type_name("slot_report"), x.slots, x.hardware, x.data);
}

/// A JobMaster's request for one slot.
struct slot_request {
  allocation_id alloc;
  resource_profile profile;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, slot_request& x) {
  return f(caf::meta::type_name("slot_request"), x.alloc, x.profile);
}

/// The ResourceManager's order to a TaskExecutor: give slot `slot_index`
/// to allocation `alloc` and offer it to the job's JobMaster.
struct slot_grant {
  allocation_id alloc;
  int32_t slot_index = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, slot_grant& x) {
  return f(caf::meta::type_name("slot_grant"), x.alloc, x.slot_index);
}

/// A TaskExecutor's offer of an allocated slot to a JobMaster.
struct slot_offer {
  allocation_id alloc;
  int32_t slot_index = 0;
  resource_profile profile;
  /// The TaskExecutor's data port: the subtasks deployed into the slot
  /// receive batches there.
  data_endpoint data;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, slot_offer& x) {
  return f(caf::meta::type_name("slot_offer"), x.alloc, x.slot_index,
           x.profile, x.data);
}

} // namespace weir
