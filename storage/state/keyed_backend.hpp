#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace weir::state {

/// What a snapshot is for. Checkpoints may be native (a backend's own
/// format, incremental where it can be); savepoints are always canonical,
/// so any backend of any cluster can restore them.
enum class snapshot_kind : int8_t {
  checkpoint = 0,
  /// A checkpoint that shares no files with earlier ones (`weir checkpoint
  /// --full`).
  full_checkpoint = 1,
  savepoint = 2,
};

/// A snapshot's bytes, or the work that yields them: `finish` runs off the
/// processing thread (it does the blocking I/O) and returns the bytes. The
/// operator keeps processing meanwhile.
struct pending_snapshot {
  std::string bytes;
  std::function<std::string()> finish;
};

/// How a named state is laid out in a byte store.
enum class state_type : int8_t {
  /// One value per key: the store key is the key.
  value = 0,
  /// A map per key: the store key is the key's prefix (map_key_prefix) and
  /// the user key.
  map = 1,
};

/// One named state of a backend that stores bytes (the RocksDB backend; the
/// heap backend's map states). Keys and values are opaque bytes.
class kv_column {
public:
  virtual ~kv_column() = default;
  virtual bool get(std::string_view key, std::string& value) = 0;
  virtual void put(std::string_view key, std::string_view value) = 0;
  virtual void remove(std::string_view key) = 0;
  /// Calls `f` for every entry whose key starts with `prefix`, in byte order
  /// of the keys.
  virtual void
  scan(std::string_view prefix,
       const std::function<void(std::string_view, std::string_view)>& f)
    = 0;
  /// Removes every entry whose key starts with `prefix`.
  virtual void remove_prefix(std::string_view prefix) = 0;
  /// Calls `f` for the entries from the first key at or after `from`, in
  /// byte order of the keys, until `f` returns false (ordered queues such
  /// as timers read only their head). RocksDB's grouped keys: a `from`
  /// that holds a whole map key (map_key_prefix) reads on within that
  /// key's group only.
  virtual void
  scan_from(std::string_view from,
            const std::function<bool(std::string_view, std::string_view)>& f)
    = 0;
};

class heap_backend;

/// The keyed state of one operator instance (Flink's KeyedStateBackend):
/// named value and map states, each scoped to the key set with
/// set_current_key(). Built by the runtime before the operator opens;
/// value_state and map_state are the operator's view of it.
class keyed_backend {
public:
  virtual ~keyed_backend() = default;

  /// The key that value_state and map_state act on; the view must stay
  /// valid while they are used.
  void set_current_key(std::string_view key) { current_ = key; }
  std::string_view current_key() const { return current_; }

  /// The heap backend keeps typed tables; other backends return nullptr and
  /// store bytes in columns.
  virtual heap_backend* heap() { return nullptr; }

  /// The byte store of state `name`, created on first use.
  virtual kv_column& column(const std::string& name, state_type type) = 0;

  /// Restores a snapshot (canonical, or this backend's native format)
  /// before the operator registers its states. Throws std::runtime_error
  /// when the bytes are unusable.
  virtual void restore(const std::string& bytes) = 0;

  /// Takes a snapshot for checkpoint `id`: what must be consistent is
  /// captured now; the rest may be left to `finish`.
  virtual pending_snapshot snapshot(int64_t id, snapshot_kind kind) = 0;

  /// The `finish` of snapshot `id` has run (on the processing thread,
  /// before the acknowledgement): copy-on-write layers can be folded.
  virtual void snapshot_written(int64_t) {}

  /// Restored states the operator did not register.
  virtual std::vector<std::string> unclaimed() const = 0;

  /// "hashmap" or "rocksdb" (Flink's state.backend.type values).
  virtual std::string name() const = 0;

protected:
  std::string_view current_;
};

/// The store-key prefix of `key`'s map entries: its length (4 bytes, big
/// endian) then the key, so that one key's entries are contiguous.
std::string map_key_prefix(std::string_view key);

} // namespace weir::state
