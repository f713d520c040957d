#pragma once

#include <memory>
#include <string>
#include <vector>

#include "storage/kv_store.hpp"

namespace rocksdb {
class ColumnFamilyHandle;
class DB;
} // namespace rocksdb

namespace weir::storage {

/// A kv_store in one RocksDB database under a directory, one column family
/// per `column`. Synced writes set `WriteOptions::sync`; a write batch is one
/// `rocksdb::WriteBatch`. Only one rocksdb_store (in any process) can have a
/// directory open at a time: RocksDB's LOCK file refuses the others.
class rocksdb_store final : public kv_store {
public:
  /// Opens the database under `path`, creating the directory (and its
  /// parents), the database and missing column families as needed. Fails with
  /// one line naming `path` when the directory cannot be created or is locked,
  /// and with `errc::storage_corrupt` naming the file when a record of the
  /// write-ahead log or a block of a table file fails its checksum (every
  /// table file is read and checked), a closed log is missing or cut short,
  /// or the store's own files do not add up (store_files_problem; then
  /// nothing is written).
  [[nodiscard]] static caf::expected<std::unique_ptr<rocksdb_store>> open(std::string path);

  rocksdb_store(const rocksdb_store&) = delete;
  rocksdb_store& operator=(const rocksdb_store&) = delete;

  /// Closes the database (releasing its LOCK).
  ~rocksdb_store() override;

  /// Flushes every column family's memtable to a table file (synced).
  [[nodiscard]] caf::error persist() override;

  /// The directory of the database.
  const std::string& path() const { return path_; }

  /// The name of the column family with RocksDB's id `id` (write-ahead log
  /// records name families by id).
  std::string family_name(uint32_t id) const;

  /// The database itself (storage/ only: the repair writes batches as they
  /// were logged).
  rocksdb::DB& db();

  [[nodiscard]] caf::expected<std::optional<std::string>> get(column c,
                                                std::string_view key) override;

  [[nodiscard]] caf::error put(column c, std::string_view key, std::string_view value,
                 durability d) override;

  [[nodiscard]] caf::error remove(column c, std::string_view key, durability d) override;

  [[nodiscard]] caf::error write(const write_batch& batch, durability d) override;

  [[nodiscard]] caf::error scan_prefix(column c, std::string_view prefix,
                         const scan_callback& f) override;

private:
  rocksdb_store(std::string path, std::unique_ptr<rocksdb::DB> db,
                std::vector<rocksdb::ColumnFamilyHandle*> handles);

  rocksdb::ColumnFamilyHandle* handle(column c) const {
    return handles_[static_cast<size_t>(c)];
  }

  std::string path_;
  std::unique_ptr<rocksdb::DB> db_;
  /// One handle per column family opened, `column` order first.
  std::vector<rocksdb::ColumnFamilyHandle*> handles_;
};

/// Why the RocksDB files under `path` do not form a store ("" when they do,
/// or when there is none yet): CURRENT missing beside the store's other
/// files, damaged, or naming a missing MANIFEST. `has_store`: whether there
/// are store files at all (a fresh directory has none). Reads only.
std::string store_files_problem(const std::string& path, bool& has_store);

/// Whether the MANIFEST of the database under `path` fails to read as
/// RocksDB reads it (a damaged record). Reads only.
bool manifest_damaged(const std::string& path);

/// Whether another process holds the RocksDB lock of the database under
/// `path` (false when there is no database yet). Probes the LOCK file alone:
/// unlike a failed open, it leaves the holder's files (its LOG) alone.
bool rocksdb_store_locked(const std::string& path);

/// Opens a rocksdb_store under `path` (see rocksdb_store::open).
[[nodiscard]] caf::expected<std::unique_ptr<kv_store>>
open_rocksdb_store(std::string path);

} // namespace weir::storage
