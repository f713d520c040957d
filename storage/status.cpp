#include "storage/status.hpp"

#include <string>

#include <fmt/format.h>
#include <rocksdb/status.h>

#include "messages/errors.hpp"

namespace weir::storage {

caf::error to_error(const rocksdb::Status& st, std::string_view path,
                    std::string_view what, std::string_view key) {
  if (st.ok())
    return caf::none;
  auto text = st.ToString();
  for (auto& ch : text)
    if (ch == '\n' || ch == '\r')
      ch = ' ';
  auto line = key.empty() ? fmt::format("{}: {}: {}", path, what, text)
                          : fmt::format("{}: {} {}: {}", path, what, key, text);
  // RocksDB reports a LOCK file held by another process (or another handle
  // in this one) as an I/O error; callers that wait for it need to know.
  bool locked = st.IsIOError() && text.find("/LOCK") != std::string::npos;
  if (st.IsCorruption())
    return make_error(errc::storage_corrupt, std::move(line));
  return make_error(locked ? errc::storage_locked : errc::storage_failure,
                    std::move(line));
}

} // namespace weir::storage
