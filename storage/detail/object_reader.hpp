#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "messages/ids.hpp"

namespace weir::storage::detail {

/// Reads typed fields of one JSON object of a stored record without throwing.
/// The readers of one record share a problem string that keeps the first
/// problem found ("missing field 'vertices[1].op'"); once it is set, reads
/// return default values.
class object_reader {
public:
  /// Reads `obj`, named `path` in problems (empty for the record itself).
  object_reader(const nlohmann::json& obj, std::string path,
                std::string& problem);

  /// A string field.
  std::string text(std::string_view name);

  /// An integer field.
  int64_t int64(std::string_view name);

  /// An integer field that fits 32 bits.
  int32_t int32(std::string_view name);

  /// A boolean field.
  bool boolean(std::string_view name);

  /// A job id field (32 hex characters).
  job_id id(std::string_view name);

  /// An object field whose values are all strings.
  std::map<std::string, std::string> text_map(std::string_view name);

  /// An object field whose values are all integers.
  std::map<std::string, int64_t> int64_map(std::string_view name);

  /// An array field whose elements are all strings.
  std::vector<std::string> texts(std::string_view name);

  /// Whether the object has a field `name` (for fields added in later
  /// versions of a record: records written before lack them).
  bool has(std::string_view name) const;

  /// The names of the object's fields.
  std::vector<std::string> keys() const;

  /// An object field.
  object_reader object(std::string_view name);

  /// An array field whose elements are all objects, one reader per element.
  std::vector<object_reader> objects(std::string_view name);

  /// Records "field '<path>.<name>' <reason>" unless a problem is known.
  void fail(std::string_view name, std::string_view reason);

private:
  using predicate = bool (nlohmann::json::*)() const noexcept;

  /// The field `name` when it exists and `is_type` holds for it; otherwise
  /// records a problem ("is not <type_name>") and returns nullptr.
  const nlohmann::json* field(std::string_view name, predicate is_type,
                              std::string_view type_name);

  /// An object field whose values all satisfy `is_value`.
  template <class T>
  std::map<std::string, T> map_of(std::string_view name, predicate is_value,
                                  std::string_view value_name);

  /// `<path>.<name>`, or `<name>` at the top.
  std::string path_of(std::string_view name) const;

  const nlohmann::json* obj_;
  std::string path_;
  std::string* problem_;
};

} // namespace weir::storage::detail
