#pragma once

#include <string_view>

#include <caf/error.hpp>

namespace rocksdb {
class Status;
} // namespace rocksdb

namespace weir::storage {

/// The one place where a RocksDB status becomes weir's error type: no error
/// for an OK status, otherwise `errc::storage_failure` (`storage_corrupt`
/// for a failed checksum, `storage_locked` for a held LOCK) with the one line
/// `<path>: <what> <key>: <status text>` (`<path>: <what>: <status text>`
/// when `key` is empty).
[[nodiscard]] caf::error to_error(const rocksdb::Status& st, std::string_view path,
                    std::string_view what, std::string_view key = {});

} // namespace weir::storage
