#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "messages/checkpoint.hpp"
#include "messages/ids.hpp"
#include "storage/kv_store.hpp"

namespace weir::storage {

/// Completed checkpoints of running jobs (Flink's CompletedCheckpointStore):
/// each checkpoint's data is one file `<dir>/<job id>/chk-<id>` (written to
/// a temporary name, synced, renamed), and the job's record in column
/// `checkpoints` lists the retained ones, newest last, synced. A restarted
/// jobmanager resumes a job from the newest one that reads back; a missing
/// or corrupt file is reported and the one before it is used.
class checkpoint_store {
public:
  checkpoint_store(kv_store& kv, std::string dir);

  /// Stores `cp` as job `job`'s newest checkpoint and drops all but the
  /// newest `retained`. Returns the file written.
  [[nodiscard]] caf::expected<std::string> put(const job_id& job, const checkpoint_snapshot& cp,
                                 int32_t retained);

  /// The newest retained checkpoint that reads back (id 0 when there is
  /// none); `problems` gets a line for each one that did not.
  [[nodiscard]] caf::expected<checkpoint_snapshot> latest(const job_id& job,
                                            std::vector<std::string>& problems);

  /// The file of checkpoint `id` of `job`.
  std::string file_of(const job_id& job, int64_t id) const;

private:
  /// The RocksDB files checkpoint `id`'s file refers to.
  std::set<std::string> files_of(const job_id& job, int64_t id) const;
  /// Deletes the files of the `dropped` checkpoints that no retained one
  /// refers to (those inside `<dir>/<job id>/` only), and the file
  /// directories of checkpoints that never completed.
  void drop(const job_id& job, const checkpoint_snapshot& newest,
            const std::vector<int64_t>& retained,
            const std::vector<int64_t>& dropped);

  kv_store& kv_;
  std::string dir_;
};

/// Writes a savepoint to `path` (a temporary name, synced, renamed).
[[nodiscard]] caf::error write_savepoint(const std::string& path, const savepoint_data& sp);

/// Reads the savepoint at `path`; errors name the path.
[[nodiscard]] caf::expected<savepoint_data> read_savepoint(const std::string& path);

/// Encodes a checkpoint's data (the file's contents) and decodes it; a
/// malformed input decodes to an error naming `what`.
std::string encode_checkpoint(const checkpoint_snapshot& cp);
[[nodiscard]] caf::expected<checkpoint_snapshot> decode_checkpoint(const std::string& bytes,
                                                     const std::string& what);

} // namespace weir::storage
