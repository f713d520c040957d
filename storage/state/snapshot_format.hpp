#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/state/keyed_backend.hpp"

namespace weir::state {

/// What one operator instance contributes to a checkpoint: its operator
/// (non-keyed) state, e.g. a source's read position, and its keyed state.
struct vertex_snapshot {
  std::string operator_state;
  std::string keyed_state;
  /// A vertex with "watermarks": the largest event time it stamped, so that
  /// a restored job does not send a watermark below one it sent before
  /// (absent in snapshots of other vertices and of older versions).
  std::optional<int64_t> max_event_time{};
};

std::string encode_vertex_snapshot(const vertex_snapshot& s);

/// nullopt when `bytes` are not a vertex snapshot (truncated, or another
/// format).
std::optional<vertex_snapshot> decode_vertex_snapshot(const std::string& bytes);

// -- canonical keyed state: the same bytes from every backend ---------------

/// Writes keyed state in canonical form: states, each with its entries
/// (store key, value bytes).
class canonical_writer {
public:
  explicit canonical_writer(int64_t states);
  void begin_state(std::string_view name, state_type type, int64_t entries);
  void entry(std::string_view key, std::string_view value);
  std::string take() { return std::move(out_); }

private:
  std::string out_;
};

bool is_canonical(const std::string& bytes);

/// Reads canonical keyed state; `on_state` is called before each state's
/// entries. Throws std::runtime_error when the bytes are malformed.
void read_canonical(
  const std::string& bytes,
  const std::function<void(const std::string&, state_type, int64_t)>& on_state,
  const std::function<void(std::string&&, std::string&&)>& on_entry);

// -- native RocksDB snapshots: files under execution.checkpointing.dir ------

/// A RocksDB snapshot: the files of the database, each with the name it has
/// in the database directory and where it was written.
struct native_handle {
  std::vector<std::pair<std::string, std::string>> files; // name, path
};

bool is_native(const std::string& bytes);
std::string encode_native(const native_handle& h);
/// Throws std::runtime_error when the bytes are malformed or a file's
/// name is not a file name (is_file_name).
native_handle decode_native(const std::string& bytes);

/// The files that the vertex snapshot `bytes` refers to (none unless it
/// holds a native snapshot).
std::vector<std::string> referenced_files(const std::string& bytes);

} // namespace weir::state
