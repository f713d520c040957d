#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "messages/printable.hpp"

namespace weir::storage {

/// The column families of a cluster's store (docs/architecture.md § Storage).
enum class column : uint8_t {
  /// Submitted JobGraphs, by job id; removed when the job ends.
  job_graphs,
  /// Terminal job results, by job id; dirty until cleanup is done, then clean.
  job_results,
  /// Metadata of completed checkpoints and savepoints.
  checkpoints,
  /// User libraries and files, by content hash.
  blobs,
};

/// Every column, in declaration order.
constexpr std::array<column, 4> all_columns{column::job_graphs,
                                           column::job_results,
                                           column::checkpoints, column::blobs};

/// The column family's name ("job_graphs", ...).
std::string to_string(column c);

/// `<column>/<key>` with the key made printable: names a key in messages.
std::string key_name(column c, std::string_view key);

/// Whether a write must reach stable storage before it returns.
enum class durability : uint8_t {
  /// Flushed and fsynced before returning (RocksDB `WriteOptions::sync`).
  /// Use it for every write that a reply acknowledges.
  synced,
  /// Survives a crash of the process but maybe not of the machine.
  unsynced,
};

/// One change of a write batch: a put, or a removal when `value` is empty.
struct write_op {
  column col = column::job_graphs;
  std::string key;
  std::optional<std::string> value;
};

/// Puts and removals across columns, applied by `kv_store::write` all or none,
/// in the order they were added (a later change of a key wins).
class write_batch {
public:
  /// Adds `key = value` in column `c`.
  void put(column c, std::string key, std::string value);

  /// Adds the removal of `key` from column `c`.
  void remove(column c, std::string key);

  /// The changes, in the order they were added.
  const std::vector<write_op>& ops() const { return ops_; }

  /// Whether the batch holds no change.
  bool empty() const { return ops_.empty(); }

private:
  std::vector<write_op> ops_;
};

/// Receives one key-value pair of a scan.
using scan_callback
  = std::function<void(std::string_view key, std::string_view value)>;

/// Receives a key whose value cannot be read, and why (an HA store's value
/// file that is missing or damaged).
using unreadable_callback
  = std::function<void(std::string_view key, const caf::error& why)>;

/// A key-value store with the columns above. Keys are ordered bytewise
/// (unsigned). Errors are `weir::errc::storage_failure` naming the store and
/// the key. Implementations are safe to call from several threads.
class kv_store {
public:
  virtual ~kv_store() = default;

  /// The value of `key` in column `c`, or nothing when the key is absent.
  [[nodiscard]] virtual caf::expected<std::optional<std::string>> get(column c,
                                                        std::string_view key)
    = 0;

  /// Sets `key` to `value` in column `c`.
  [[nodiscard]] virtual caf::error put(column c, std::string_view key,
                         std::string_view value, durability d)
    = 0;

  /// Removes `key` from column `c`; removing an absent key is no error.
  [[nodiscard]] virtual caf::error remove(column c, std::string_view key, durability d) = 0;

  /// Applies every change of `batch` atomically: after a crash or an error
  /// either all of them are visible or none is.
  [[nodiscard]] virtual caf::error write(const write_batch& batch, durability d) = 0;

  /// Calls `f` for every key of column `c` that starts with `prefix`, in key
  /// order. The scan reads a consistent snapshot taken when it starts, so `f`
  /// may write to the store (it does not see its own writes).
  [[nodiscard]] virtual caf::error scan_prefix(column c, std::string_view prefix,
                                 const scan_callback& f)
    = 0;

  /// Calls `f` for every key of column `c`, in key order (see scan_prefix).
  [[nodiscard]] caf::error scan(column c, const scan_callback& f) {
    return scan_prefix(c, {}, f);
  }

  /// Makes every write so far durable beyond the live write-ahead log
  /// (RocksDB: memtables flushed to table files), for records that must
  /// never be lost, such as a job's terminal result. Stores without a log
  /// have nothing to do.
  [[nodiscard]] virtual caf::error persist() {
    return caf::none;
  }

  /// As scan(), but a value that cannot be read goes to `bad` and the scan
  /// goes on: only a store that cannot be read at all fails it. A store
  /// that keeps values with their keys (RocksDB, memory) reads all or none.
  [[nodiscard]] virtual caf::error scan_readable(column c, const scan_callback& f,
                                   const unreadable_callback& bad) {
    (void) bad;
    return scan(c, f);
  }
};

} // namespace weir::storage
