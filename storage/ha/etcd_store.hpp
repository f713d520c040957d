#pragma once

#include <atomic>
#include <memory>
#include <string>

#include "storage/ha/etcd_client.hpp"
#include "storage/kv_store.hpp"

namespace weir::storage {

/// Writes are accepted only while etcd's key `key` has create revision
/// `revision`: the leader key this jobmanager created with its lease. When
/// the lease ends, etcd removes the key, and every later write is refused.
struct etcd_fence {
  std::string key;
  int64_t revision = 0;
};

/// The store of a highly available cluster (high-availability.type: etcd,
/// docs/deployment.md § etcd): each value is a file under a directory every
/// jobmanager can reach (high-availability.storageDir), each key a small
/// pointer to its file in etcd. A write puts new files first, then swaps the
/// pointers in one etcd transaction that holds only while the fence does;
/// replaced files are removed after it. No file lock is needed: the fence
/// makes the leader the only writer.
class etcd_store final : public kv_store {
public:
  /// Opens the store of the values under `dir` (created) and the pointers
  /// under `prefix` in etcd, and removes files no pointer names (writes that
  /// a crash cut short). Call it as the leader, holding `fence`.
  static caf::expected<std::unique_ptr<etcd_store>>
  open(std::shared_ptr<etcd_client> etcd, std::string dir, std::string prefix,
       etcd_fence fence);

  caf::expected<std::optional<std::string>> get(column c,
                                                std::string_view key) override;

  caf::error put(column c, std::string_view key, std::string_view value,
                 durability d) override;

  caf::error remove(column c, std::string_view key, durability d) override;

  /// One etcd transaction: at most etcd's --max-txn-ops (128 by default)
  /// changes, less one for the fence.
  caf::error write(const write_batch& batch, durability d) override;

  caf::error scan_prefix(column c, std::string_view prefix,
                         const scan_callback& f) override;

private:
  etcd_store(std::shared_ptr<etcd_client> etcd, std::string dir,
             std::string prefix, etcd_fence fence);

  /// The etcd key of `key` in column `c`.
  std::string pointer(column c, std::string_view key) const;

  /// Reads the value file `name` names (relative to dir_).
  caf::expected<std::string> read_value(const std::string& name) const;

  /// Writes `value` to a new file of column `c`; its name.
  caf::expected<std::string> write_value(column c, std::string_view value);

  /// Removes the files no pointer names.
  caf::error collect_garbage();

  std::shared_ptr<etcd_client> etcd_;
  std::string dir_;
  std::string prefix_;
  etcd_fence fence_;
  std::atomic<uint64_t> next_file_{0};
};

} // namespace weir::storage
