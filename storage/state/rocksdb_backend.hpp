#pragma once

#include <memory>
#include <string>

#include "messages/key_groups.hpp"
#include "storage/state/keyed_backend.hpp"
#include "storage/state/rescale.hpp"

namespace weir::state {

struct rocksdb_backend_options {
  /// This instance's own directory (created; removed when it closes).
  std::string local_dir;
  /// The job's directory under execution.checkpointing.dir, shared by every
  /// TaskExecutor. Empty: checkpoints are canonical bytes.
  std::string checkpoint_dir;
  /// execution.checkpointing.incremental: checkpoints upload only the SST
  /// files earlier checkpoints did not.
  bool incremental = false;
  /// Names this instance's files, e.g. "<vertex>-<subtask index>".
  std::string owner;
  /// The key group of a state's key, and the number of key groups
  /// (docs/state.md § Key groups). Set, a new database prefixes every
  /// key of a keyed state (not of a timer queue) with its key group (2
  /// bytes, big endian), so that a rescale reads a range of groups without
  /// scanning the rest; unset (an operator not partitioned by key), keys
  /// are stored as they are.
  key_group_fn group_of;
  int32_t max_parallelism = 0;
};

/// Keyed state in an embedded RocksDB (state.backend.type: rocksdb), one
/// database per operator instance, one column family per state. The write
/// ahead log is off: durability comes from checkpoints. A checkpoint is
/// RocksDB's own (flush and hard links, on the processing thread); copying
/// its files to the checkpoint directory happens in `finish`.
class rocksdb_backend : public keyed_backend {
public:
  explicit rocksdb_backend(rocksdb_backend_options opts);
  ~rocksdb_backend() override;

  kv_column& column(const std::string& name, state_type type) override;
  void restore(const std::string& bytes) override;
  pending_snapshot snapshot(int64_t id, snapshot_kind kind) override;
  std::vector<std::string> unclaimed() const override;
  std::string name() const override { return "rocksdb"; }

  struct impl;

private:
  friend std::string native_range_to_canonical(const std::string&,
                                               key_group_range, int32_t);
  std::shared_ptr<impl> impl_;
};

/// The canonical form of a native RocksDB snapshot (read through a
/// temporary database), for restoring it on another backend.
std::string native_to_canonical(const std::string& bytes);

/// The same, of the keyed states' key groups in `range` when the database
/// prefixes keys with groups of `max_parallelism` (reading only those);
/// otherwise of everything. Timer queues come whole.
std::string native_range_to_canonical(const std::string& bytes,
                                      key_group_range range,
                                      int32_t max_parallelism);

} // namespace weir::state
