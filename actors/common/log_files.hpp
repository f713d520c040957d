#pragma once

// A process's log files, listed and read in pieces: the jobmanager's REST
// API serves its own, a TaskExecutor answers for its host's
// (GET /taskmanagers/{id}/logs).

#include <string>
#include <vector>

#include <caf/expected.hpp>

#include "messages/log_file.hpp"

namespace weir {

/// This process's log files: the event log's file (`--log FILE`), or none
/// when it logs to stderr.
std::vector<log_file> log_files();

/// Up to log_piece_bytes of log file `name` from byte `offset` ("" at or
/// past its end). Only a file log_files() lists is read, never another
/// path; invalid_request otherwise, or for a negative offset.
[[nodiscard]] caf::expected<std::string>
read_log_piece(const std::string& name, int64_t offset);

} // namespace weir
