#include "cluster/state_dir.hpp"

#include "messages/errors.hpp"
#include "storage/rocksdb_store.hpp"
#include "storage/state_identity.hpp"

namespace weir {

caf::expected<std::shared_ptr<storage::kv_store>>
open_state_dir(const std::string& dir, const std::string& cluster_id) {
  auto kv = storage::open_rocksdb_store(dir);
  if (!kv)
    return kv.error();
  if (auto err = storage::claim_state_dir(**kv, cluster_id, dir))
    return err;
  return std::shared_ptr<storage::kv_store>{std::move(*kv)};
}

} // namespace weir
