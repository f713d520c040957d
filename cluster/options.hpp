#pragma once

// The keys every cluster reads, whether it runs in one process (the mini
// cluster) or as a jobmanager and taskmanagers (process/processes.hpp).

#include "actors/job_master/job_master.hpp"
#include "actors/resource_manager/resource_manager.hpp"
#include "config/config.hpp"
#include "dataplane/network_buffers.hpp"

namespace weir {

/// taskmanager.memory.network.max and .network.memory.buffers-per-channel.
network_buffer_options network_buffers_of(const configuration& cfg);

/// The keys of the ResourceManager and the JobMasters every cluster reads.
void read_master_keys(const configuration& cfg, resource_manager_options& rm,
                      job_master_options& jm);

} // namespace weir
