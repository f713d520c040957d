#pragma once

#include <string>
#include <string_view>

#include <caf/error.hpp>
#include <caf/expected.hpp>

namespace weir::storage {

/// The whole file at `path`, or an error naming it.
[[nodiscard]] caf::expected<std::string> read_whole_file(const std::string& path);

/// The temporary name a durable_file (and write_durably()) writes `path`
/// under; a start removes stale ones.
std::string temporary_name(const std::string& path);

/// A file written durably, piece by piece: under a temporary name
/// (`<path>.tmp`), then synced and renamed by commit(). Without a commit
/// (an error, or destruction) the temporary file is removed and `path` is
/// untouched. Errors name the file.
class durable_file {
public:
  explicit durable_file(std::string path);
  ~durable_file();
  durable_file(const durable_file&) = delete;
  durable_file& operator=(const durable_file&) = delete;

  [[nodiscard]] caf::error append(std::string_view bytes);
  [[nodiscard]] caf::error commit();

private:
  [[nodiscard]] caf::error fail(const char* what);

  std::string path_;
  std::string tmp_;
  int fd_ = -1;
  caf::error open_error_;
};

/// Writes `bytes` to `path` durably (see durable_file).
[[nodiscard]] caf::error write_durably(const std::string& path, std::string_view bytes);

} // namespace weir::storage
