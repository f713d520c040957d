#include "storage/state/backend_factory.hpp"

#include <stdexcept>

#include "storage/state/heap_backend.hpp"
#include "storage/state/rocksdb_backend.hpp"

namespace weir::state {

std::unique_ptr<keyed_backend>
make_keyed_backend(const state_backend_desc& d, const std::string& local_dir,
                   const std::string& owner, key_group_fn group_of,
                   int32_t max_parallelism) {
  if (d.type == "hashmap")
    return std::make_unique<heap_backend>();
  if (d.type == "rocksdb") {
    rocksdb_backend_options o;
    o.local_dir = local_dir;
    o.checkpoint_dir = d.checkpoint_dir;
    o.incremental = d.incremental;
    o.owner = owner;
    o.group_of = std::move(group_of);
    o.max_parallelism = max_parallelism;
    return std::make_unique<rocksdb_backend>(std::move(o));
  }
  throw std::runtime_error("unknown state.backend.type '" + d.type
                           + "' (expected hashmap or rocksdb)");
}

} // namespace weir::state
