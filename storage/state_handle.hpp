#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace weir::storage {

/// A subtask's state of one vertex in checkpoint storage (Flink's
/// StreamStateHandle): the file it was written to, its size and its XXH3
/// checksum. A checkpoint's acknowledgement, the JobMaster's completed
/// checkpoints and the stored checkpoint files carry the handle's encoding
/// in place of the state's bytes, so none of them grows with the state.
struct state_handle {
  std::string path;
  int64_t size = 0;
  uint64_t checksum = 0;
};

/// State up to this size stays inline, in the acknowledgement (Flink's
/// state.storage.fs.memory-threshold default, 20 KiB).
inline constexpr size_t inline_state_limit = 20 * 1024;

bool is_state_handle(const std::string& bytes);
std::string encode_state_handle(const state_handle& h);
/// nullopt when `bytes` are not a well-formed handle.
std::optional<state_handle> decode_state_handle(const std::string& bytes);

/// The size of the state `bytes` stand for (a handle's file size).
int64_t state_size(const std::string& bytes);

/// Writes a vertex's state `bytes` to `path` (a temporary name, synced,
/// renamed) and returns the handle's encoding; returns `bytes` itself when
/// they are small (inline_state_limit) or refer to files of their own (a
/// RocksDB snapshot). Blocking I/O; throws std::runtime_error naming the
/// file.
std::string offload_state(const std::string& path, std::string bytes);

/// The state's bytes: `bytes` itself, or what the handle it encodes points
/// at, checked against its size and checksum. Blocking I/O; throws
/// std::runtime_error naming the file when it is missing or differs.
std::string resolve_state(std::string bytes);

/// The state files a vertex's state `bytes` refers to: a handle's file, or
/// the files of a RocksDB snapshot.
std::vector<std::string> state_files_of(const std::string& bytes);

} // namespace weir::storage
