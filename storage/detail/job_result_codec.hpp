#pragma once

#include <string>
#include <string_view>

#include <caf/expected.hpp>

#include "messages/job_result.hpp"
#include "storage/job_result_store.hpp"

namespace weir::storage::detail {

/// The JSON record of `r`: format_version, dirty, id, name, state (Flink's
/// name), error, start/end times, metrics and the collected records.
std::string encode_job_result(const job_result& r, bool dirty);

/// Reads the record stored under `key` in column job_results; errors name the
/// key and the first problem found.
[[nodiscard]] caf::expected<job_result_entry> decode_job_result(std::string_view key,
                                                  std::string_view value);

} // namespace weir::storage::detail
