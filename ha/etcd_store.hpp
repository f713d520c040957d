#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>

#include "ha/etcd_client.hpp"
#include "storage/kv_store.hpp"

namespace weir::ha {

using storage::column;
using storage::durability;
using storage::write_batch;
using storage::scan_callback;
using storage::unreadable_callback;

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
class etcd_store final : public storage::kv_store {
public:
  /// Opens the store of the values under `dir` (created) and the pointers
  /// under `prefix` in etcd, and removes files of earlier leaders that no
  /// pointer names (writes that a crash cut short). Call it as the leader,
  /// holding `fence`; `fenced(why)` runs when a write finds the fence gone.
  [[nodiscard]] static caf::expected<std::unique_ptr<etcd_store>>
  open(std::shared_ptr<etcd_client> etcd, std::string dir, std::string prefix,
       etcd_fence fence, std::function<void(const std::string&)> fenced = {});

  /// Why a jobmanager could not use the store under `dir` and `prefix`
  /// ("" when it can), asked before it campaigns: `dir` must be a
  /// directory this process can create files in, and when etcd names
  /// value files, at least one of them must be there (none found means
  /// another or an unmounted directory; a few missing is damage the
  /// leader reports job by job).
  static std::string usability_problem(etcd_client& etcd,
                                       const std::string& dir,
                                       const std::string& prefix);

  [[nodiscard]] caf::expected<std::optional<std::string>> get(column c,
                                                std::string_view key) override;

  [[nodiscard]] caf::error put(column c, std::string_view key, std::string_view value,
                 durability d) override;

  [[nodiscard]] caf::error remove(column c, std::string_view key, durability d) override;

  /// One etcd transaction, conditioned on the fence and on each key being
  /// as it was read just before (a write that arrives late cannot undo a
  /// newer one): at most etcd's --max-txn-ops (128 by default) changes. When
  /// etcd does not answer, the pointers are read back to learn whether it
  /// was applied; an error means it was not (or that this is unknown, in
  /// which case the next leader's garbage collection settles the files).
  [[nodiscard]] caf::error write(const write_batch& batch, durability d) override;

  [[nodiscard]] caf::error scan_prefix(column c, std::string_view prefix,
                         const scan_callback& f) override;

  /// A pointer whose value file is missing or damaged goes to `bad`.
  [[nodiscard]] caf::error scan_readable(column c, const scan_callback& f,
                           const unreadable_callback& bad) override;

private:
  /// scan_prefix and scan_readable: `bad` (if any) takes unreadable values.
  [[nodiscard]] caf::error scan_values(column c, std::string_view prefix,
                         const scan_callback& f,
                         const unreadable_callback* bad);

  etcd_store(std::shared_ptr<etcd_client> etcd, std::string dir,
             std::string prefix, etcd_fence fence,
             std::function<void(const std::string&)> fenced);

  /// The etcd key of `key` in column `c`.
  std::string pointer(column c, std::string_view key) const;

  /// Reads the value file `name` names (relative to dir_), the value of
  /// pointer `key`; a name that is not one of this store's value files is
  /// damage (etcd is not trusted to name paths).
  [[nodiscard]] caf::expected<std::string> read_value(column c, std::string_view key,
                                        const std::string& name) const;

  /// Whether `name` is the name of a value file of column `c`.
  static bool value_file(column c, const std::string& name);

  /// The refusal of a write of `batch` that found the fence gone.
  [[nodiscard]] caf::error refused(const write_batch& batch);

  /// Writes `value` to a new file of column `c`; its name.
  [[nodiscard]] caf::expected<std::string> write_value(column c, std::string_view value);

  /// Removes the files no pointer names.
  [[nodiscard]] caf::error collect_garbage();

  std::shared_ptr<etcd_client> etcd_;
  std::string dir_;
  std::string prefix_;
  etcd_fence fence_;
  std::function<void(const std::string&)> fenced_;
  std::atomic<uint64_t> next_file_{0};
};

} // namespace weir::ha
