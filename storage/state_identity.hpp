#pragma once

#include <caf/error.hpp>

#include <string>
#include <string_view>

#include "storage/kv_store.hpp"

namespace weir::storage {

/// Where a state directory records which cluster it belongs to: one JSON
/// record `{"format_version": 1, "cluster_id": "<id>"}` in column `blobs`
/// (whose own keys are content hashes, never containing '/'). Recovery never
/// scans that column, so the record is invisible to the job tables.
constexpr column identity_column = column::blobs;
constexpr std::string_view identity_key = "meta/cluster-id";

/// Claims the store of state directory `dir` for cluster `cluster_id`
/// (`high-availability.cluster-id`): a store without an identity record (a
/// new directory, or one written before the record existed) is stamped with
/// `cluster_id` (synced); a stamped one must carry the same id. Returns none
/// when the store may be used, else `errc::storage_failure` with one line
/// starting with `dir`, such as
/// `DIR belongs to cluster 'a', not 'b' (high-availability.cluster-id)` or
/// `DIR: cannot record its cluster id: <storage error>`, to be printed after
/// a prefix such as "cannot open the state directory: ". Never changes a
/// record that is already there.
[[nodiscard]] caf::error claim_state_dir(kv_store& kv, const std::string& cluster_id,
                           const std::string& dir);

} // namespace weir::storage
