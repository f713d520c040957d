#pragma once

#include <memory>
#include <string>

#include "messages/deployment.hpp"
#include "storage/state/keyed_backend.hpp"

namespace weir::state {

/// The keyed backend `d` names for one operator instance: RocksDB keeps its
/// database in `local_dir`; `owner` names its checkpoint files. Throws
/// std::runtime_error for an unknown type.
std::unique_ptr<keyed_backend> make_keyed_backend(const state_backend_desc& d,
                                                  const std::string& local_dir,
                                                  const std::string& owner);

} // namespace weir::state
