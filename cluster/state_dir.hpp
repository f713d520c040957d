#pragma once

#include <memory>
#include <string>

#include <caf/expected.hpp>

namespace weir {

namespace storage {
class kv_store;
} // namespace storage

/// Opens the RocksDB state directory `dir` and claims it for `cluster_id`
/// (storage/state_identity.hpp). Errors: `errc::storage_locked` while
/// another process holds it, `errc::storage_failure` when it belongs to
/// another cluster (the context says whose), the store's own errors.
[[nodiscard]] caf::expected<std::shared_ptr<storage::kv_store>>
open_state_dir(const std::string& dir, const std::string& cluster_id);

} // namespace weir
