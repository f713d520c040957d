#pragma once

#include <string>
#include <vector>

#include <caf/error.hpp>

#include "storage/kv_store.hpp"

namespace weir::storage {

/// Files a write creates under a temporary name before it renames them
/// (a savepoint: `PATH.tmp`). Each is noted in the store (synced) before it
/// is created and forgotten once renamed, so that the temporary file of a
/// process killed meanwhile is found and removed by the next one to open
/// the store, wherever it was written.
class temporary_files {
public:
  explicit temporary_files(kv_store& kv) : kv_(kv) {
    // nop
  }

  /// Notes that `path` is about to be created.
  [[nodiscard]] caf::error begin(const std::string& path);

  /// Forgets `path` (renamed or removed): a lost note only makes the next
  /// start look for a file that is not there.
  void end(const std::string& path);

  /// Removes every noted file still there and forgets them all; returns the
  /// files it removed.
  std::vector<std::string> remove_stale();

  /// Removes the temporary checkpoint files (`chk-<n>.tmp`) in the
  /// directories under `checkpoint_dir` of the jobs this store has
  /// checkpoint records of (a checkpoint is written there, synced and
  /// renamed, on the job store's one thread); returns the files it removed.
  /// Call it before the first checkpoint is written.
  std::vector<std::string> remove_stale_checkpoints(
    const std::string& checkpoint_dir);

private:
  kv_store& kv_;
};

} // namespace weir::storage
