#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <caf/error.hpp>
#include <caf/expected.hpp>
#include <nlohmann/json.hpp>

#include "messages/ids.hpp"
#include "storage/kv_store.hpp"

namespace weir::storage::detail {

/// The format version written into every record of the typed tables.
constexpr int64_t format_version = 1;

/// A stored record keyed by job id, parsed but not yet decoded.
struct opened_record {
  job_id id;
  nlohmann::json doc;
};

/// The error for a record that cannot be read: `errc::storage_failure` with
/// the line `<column>/<key>: <reason>`.
[[nodiscard]] caf::error record_problem(column c, std::string_view key,
                          std::string_view reason);

/// Checks that `key` is a job id in its canonical form and that `value` is a
/// JSON object carrying `format_version` 1.
[[nodiscard]] caf::expected<opened_record> open_record(column c, std::string_view key,
                                         std::string_view value);

/// A new record document: `{"format_version": 1}`.
nlohmann::json new_record();

/// The stored text of `doc`. Strings that are not valid UTF-8 are stored with
/// U+FFFD in place of their invalid bytes (JSON cannot hold raw bytes).
std::string dump_record(const nlohmann::json& doc);

} // namespace weir::storage::detail
