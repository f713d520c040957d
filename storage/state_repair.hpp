#pragma once

#include <string>
#include <vector>

#include <caf/expected.hpp>

namespace weir::storage {

/// What a repair of a state directory dropped.
struct repair_report {
  /// One line per dropped record: the file and bytes it spanned, why, and
  /// the changes it held as far as they can be read (with what the store
  /// holds for each key now).
  std::vector<std::string> dropped;
  /// Where the damaged files are kept, unchanged ("" when nothing was).
  std::string lost_dir;
  /// What was wrong with the store's own files (CURRENT, the MANIFEST),
  /// when RocksDB's RepairDB rebuilt them from the table files and logs
  /// ("" when it was not needed).
  std::string salvaged;
};

/// Repairs the state directory `dir` (a RocksDB database no process holds):
/// every write-ahead log record that fails its checksum is dropped and
/// reported; every intact one is kept, the ones after the damage included
/// (RocksDB itself would drop the rest of the 32 KiB block, or of the log).
/// Each damaged log file is first copied to `dir/lost/`, then replaced (a
/// temporary file, synced, renamed) by one holding its intact records, and
/// the store is opened to replay them. With `dry_run`, all of this happens
/// on a copy of `dir` in the temporary directory and `dir` is untouched.
/// When the store's own files do not add up (CURRENT missing, damaged or
/// naming a missing MANIFEST), every file is copied to `dir/lost/` and
/// RocksDB's RepairDB rebuilds them from the table files and logs, which it
/// keeps (`salvaged` says why).
/// Errors: `storage_locked` while a process holds `dir`, `storage_corrupt`
/// when a table file is damaged (it cannot be repaired record by record),
/// `storage_failure` otherwise; each names the file.
[[nodiscard]] caf::expected<repair_report> repair_state_dir(const std::string& dir,
                                              bool dry_run);

} // namespace weir::storage
