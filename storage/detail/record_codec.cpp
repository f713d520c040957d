#include "storage/detail/record_codec.hpp"

#include <fmt/format.h>

#include "messages/errors.hpp"
#include "storage/detail/object_reader.hpp"

namespace weir::storage::detail {

caf::error record_problem(column c, std::string_view key,
                          std::string_view reason) {
  return make_error(errc::storage_failure,
                    fmt::format("{}: {}", key_name(c, key), reason));
}

caf::expected<opened_record> open_record(column c, std::string_view key,
                                         std::string_view value) {
  auto id = job_id::parse(key);
  if (!id || id->to_string() != key)
    return record_problem(c, key, "key is not a job id");
  opened_record result{*id, nlohmann::json{}};
  try {
    result.doc = nlohmann::json::parse(value);
  } catch (const nlohmann::json::parse_error& e) {
    return record_problem(c, key, fmt::format("invalid JSON at byte {}",
                                              e.byte));
  }
  if (!result.doc.is_object())
    return record_problem(c, key, "record is not a JSON object");
  std::string problem;
  auto version = object_reader{result.doc, {}, problem}.int64("format_version");
  if (!problem.empty())
    return record_problem(c, key, problem);
  if (version != format_version)
    return record_problem(c, key,
                          fmt::format("unknown format_version {}", version));
  return result;
}

nlohmann::json new_record() {
  auto doc = nlohmann::json::object();
  doc["format_version"] = format_version;
  return doc;
}

std::string dump_record(const nlohmann::json& doc) {
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

} // namespace weir::storage::detail
