#pragma once

// Reading the JSON bodies of the REST API's write requests: plain
// functions whose errors are one line naming the field, answered 400.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

#include <nlohmann/json.hpp>

namespace weir::rest {

/// The most a JSON request body may take once parsed: the bodies (up to
/// rest.server.max-content-length each) stay in memory as text, their
/// trees do not grow past this.
constexpr size_t max_body_tree_bytes = size_t{16} << 20;

/// How an error's context starts when a body's tree would be larger (HTTP
/// 413).
constexpr const char* body_too_large = "the request body would take more than";

// Every problem below is `errc::invalid_request` whose context is one line
// naming the field (refused() answers it 400, or 413 for body_too_large).

/// The JSON object `text` holds (an empty body is {}); an error when it is
/// not JSON or not an object, or would take more than max_body_tree_bytes
/// as a tree.
[[nodiscard]] caf::expected<nlohmann::json>
parse_body(const std::string& text);

/// Field `name` of `body`: `fallback` when absent or null; an error when it
/// has another type.
[[nodiscard]] caf::expected<std::string>
string_field(const nlohmann::json& body, const std::string& name,
             std::string fallback);
[[nodiscard]] caf::expected<bool> bool_field(const nlohmann::json& body,
                                             const std::string& name,
                                             bool fallback);

/// Field `name` as a whole number in [low, high]; nothing when absent or
/// null.
[[nodiscard]] caf::expected<std::optional<int64_t>>
int_field(const nlohmann::json& body, const std::string& name, int64_t low,
          int64_t high);

/// Field `name` as an array of strings (absent or null: empty).
[[nodiscard]] caf::expected<std::vector<std::string>>
strings_field(const nlohmann::json& body, const std::string& name);

/// Field `name` as an object whose values are strings, numbers or booleans,
/// each as its text (absent or null: empty); the key names it in a problem.
[[nodiscard]] caf::expected<std::vector<std::pair<std::string, std::string>>>
text_map_field(const nlohmann::json& body, const std::string& name);

/// A directory as a REST request gives it: "file://" or "file:" stripped;
/// it must be absolute (the jobmanager's working directory means nothing to
/// a client), else the error names `field`.
[[nodiscard]] caf::expected<std::string>
absolute_directory(const std::string& given, const std::string& field);

/// A savepoint's directory as a request gives it in `field`: "" when none
/// is given (the job's execution.checkpointing.savepoint-dir, else the
/// jobmanager's, applies: its JobMaster resolves it), else
/// absolute_directory's.
[[nodiscard]] caf::expected<std::string>
savepoint_directory(const std::string& given, const std::string& field);

} // namespace weir::rest
