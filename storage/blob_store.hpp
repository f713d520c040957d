#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "messages/job_graph.hpp"
#include "storage/kv_store.hpp"

namespace weir::storage {

/// The content hash that names a blob: XXH3-128 of the bytes, 32 hex
/// digits. (Not cryptographic: it identifies content shipped by the
/// cluster's own users, as Flink's blob keys do.)
std::string content_hash(std::string_view bytes);

/// The content hash of the file at `path`, or an error naming it.
[[nodiscard]] caf::expected<std::string> file_hash(const std::string& path);

/// A file of a job's user code (a library or an attached file) read to be
/// shipped with the job: its reference (file name, content hash, absolute
/// path) and bytes, unless `not_a_file` or `read_error` (the system's
/// reason) says why not. Callers word the error for their flag or field.
struct user_file {
  blob_ref ref;
  std::string bytes;
  bool not_a_file = false;
  std::string read_error;

  bool ok() const { return !not_a_file && read_error.empty(); }
};

/// Reads `path` (made absolute against the working directory).
user_file read_user_file(const std::string& path);

/// User libraries and files by content hash (column `blobs`, keys
/// `content/<hash>`), so that a recovered job finds its code again. Every
/// write is synced.
class blob_store {
public:
  explicit blob_store(kv_store& kv) : kv_(kv) {}

  /// Stores `bytes` under `hash`; refuses bytes whose hash differs.
  [[nodiscard]] caf::error put(const std::string& hash, const std::string& bytes);

  /// The blob named `hash`, or nothing.
  [[nodiscard]] caf::expected<std::optional<std::string>> get(const std::string& hash);

  /// Removes those of `hashes` that no stored job graph refers to (after a
  /// job's cleanup).
  [[nodiscard]] caf::error remove_unreferenced(const std::vector<std::string>& hashes);

private:
  kv_store& kv_;
};

} // namespace weir::storage
