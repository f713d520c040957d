#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/meta/type_name.hpp>

namespace weir {

/// The type of a field of a row (docs/rows.md).
enum class field_type : uint8_t {
  int64,
  float64,
  boolean,
  string,
  bytes,
  timestamp, ///< milliseconds since the epoch, UTC
};

/// "int64", "double", "bool", "string", "bytes", "timestamp".
std::string_view to_string(field_type t);

/// The type named `name` (also "long", "float64", "boolean", "text"), or
/// nullopt.
std::optional<field_type> parse_field_type(std::string_view name);

/// Whether values of the type are fixed-width integers in a column
/// (int64, boolean, timestamp).
inline bool holds_ints(field_type t) {
  return t == field_type::int64 || t == field_type::boolean
         || t == field_type::timestamp;
}

/// Whether values of the type are byte strings (string, bytes).
inline bool holds_chars(field_type t) {
  return t == field_type::string || t == field_type::bytes;
}

/// One named, typed field. `nullable`: the field may hold null.
struct field {
  std::string name;
  field_type type = field_type::int64;
  bool nullable = false;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, field& x) {
  return f(caf::meta::type_name("field"), x.name, x.type, x.nullable);
}

bool operator==(const field& a, const field& b);
inline bool operator!=(const field& a, const field& b) {
  return !(a == b);
}

/// The fields of every row on an edge, in order.
struct schema {
  std::vector<field> fields;

  /// The index of the field named `name`, or nullopt.
  std::optional<size_t> find(std::string_view name) const;

  size_t size() const { return fields.size(); }
  bool empty() const { return fields.empty(); }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, schema& x) {
  return f(caf::meta::type_name("schema"), x.fields);
}

bool operator==(const schema& a, const schema& b);
inline bool operator!=(const schema& a, const schema& b) {
  return !(a == b);
}

/// "(user: string, status: int64, bytes: int64)"; a nullable field's type
/// ends in '?'.
std::string to_string(const schema& s);

/// Parses what to_string(schema) prints, and the shorter "user:string,
/// bytes:int64" (parentheses, spaces and a final '?' optional). Returns the
/// schema or a one-line problem.
struct parsed_schema {
  schema value;
  std::string problem;
};
parsed_schema parse_schema(std::string_view text);

/// The schemas of weir's first records, which every record had before rows
/// (a string key, an int64 or string value): today's specs run unchanged
/// on them.
namespace default_schema {
/// (value: int64)
schema numbers();
/// (value: string)
schema lines();
/// (key: string, value: int64)
schema keyed_numbers();
/// (key: string, value: string)
schema keyed_lines();
/// Whether `s` is one of the four (what the record adapters accept).
bool matches(const schema& s);
} // namespace default_schema

} // namespace weir
