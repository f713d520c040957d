#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <caf/expected.hpp>

namespace weir::storage::detail {

/// One record of a RocksDB write-ahead log: a write batch (one acknowledged
/// put, removal or batch of them).
struct wal_record {
  /// Byte offset of its first fragment's header in the file.
  uint64_t offset = 0;
  /// Bytes it spans in the file, headers included.
  uint64_t size = 0;
  /// Whether every fragment passed its checksum.
  bool intact = true;
  /// Why it is not intact ("checksum mismatch", ...).
  std::string problem;
  /// The write batch (RocksDB's WriteBatch representation); for a damaged
  /// record whatever its fragments hold.
  std::string batch;
};

/// Reads the write-ahead log file at `path` record by record, checking
/// every fragment's CRC32C as RocksDB does (the log format of
/// rocksdb/db/log_format.h, which is stable across versions). Unlike
/// RocksDB's own reader, a damaged record does not end the read: the reader
/// resynchronizes on the next header whose checksum holds, so the records
/// after the damage are found and only the damaged one is reported. A torn
/// record at the very end (a crash during its write) is not reported: it
/// was never acknowledged. Errors only when the file cannot be read.
[[nodiscard]] caf::expected<std::vector<wal_record>> read_wal(const std::string& path);

/// `records` (their batches) in RocksDB's log format, as a write-ahead log
/// file holding just them; read_wal reads it back.
std::string encode_wal(const std::vector<wal_record>& records);

/// The sequence number of a write batch (0 when it is too short to hold one).
uint64_t batch_sequence(const std::string& batch);

/// The write-ahead log files of the RocksDB database under `dir`
/// (`<number>.log`), oldest first.
std::vector<std::string> wal_files(const std::string& dir);

} // namespace weir::storage::detail
