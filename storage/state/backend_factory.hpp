#pragma once

#include <memory>
#include <string>

#include "messages/deployment.hpp"
#include "storage/state/keyed_backend.hpp"
#include "storage/state/rescale.hpp"

namespace weir::state {

/// The keyed backend `d` names for one operator instance: RocksDB keeps its
/// database in `local_dir`; `owner` names its checkpoint files; its keys
/// carry their key group (`group_of`, of `max_parallelism` groups) when
/// the operator is keyed. Throws std::runtime_error for an unknown type.
std::unique_ptr<keyed_backend>
make_keyed_backend(const state_backend_desc& d, const std::string& local_dir,
                   const std::string& owner, key_group_fn group_of = {},
                   int32_t max_parallelism = 0);

} // namespace weir::state
