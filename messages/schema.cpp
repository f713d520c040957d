#include "messages/schema.hpp"

#include <cctype>

#include <fmt/format.h>

namespace weir {

std::string_view to_string(field_type t) {
  switch (t) {
    case field_type::int64:
      return "int64";
    case field_type::float64:
      return "double";
    case field_type::boolean:
      return "bool";
    case field_type::string:
      return "string";
    case field_type::bytes:
      return "bytes";
    case field_type::timestamp:
      return "timestamp";
  }
  return "unknown";
}

std::optional<field_type> parse_field_type(std::string_view name) {
  struct alias {
    std::string_view name;
    field_type type;
  };
  static constexpr alias table[] = {
    {"int64", field_type::int64},     {"long", field_type::int64},
    {"int", field_type::int64},       {"double", field_type::float64},
    {"float64", field_type::float64}, {"bool", field_type::boolean},
    {"boolean", field_type::boolean}, {"string", field_type::string},
    {"text", field_type::string},     {"bytes", field_type::bytes},
    {"timestamp", field_type::timestamp},
  };
  for (auto& a : table)
    if (a.name == name)
      return a.type;
  return std::nullopt;
}

bool operator==(const field& a, const field& b) {
  return a.name == b.name && a.type == b.type && a.nullable == b.nullable;
}

std::optional<size_t> schema::find(std::string_view name) const {
  for (size_t i = 0; i < fields.size(); ++i)
    if (fields[i].name == name)
      return i;
  return std::nullopt;
}

bool operator==(const schema& a, const schema& b) {
  return a.fields == b.fields;
}

std::string to_string(const schema& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.fields.size(); ++i) {
    if (i > 0)
      out += ", ";
    out += s.fields[i].name;
    out += ": ";
    out += to_string(s.fields[i].type);
    if (s.fields[i].nullable)
      out += '?';
  }
  out += ')';
  return out;
}

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

bool is_field_name(std::string_view s) {
  if (s.empty() || s.size() > 128)
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return !std::isdigit(static_cast<unsigned char>(s.front()));
}

} // namespace

parsed_schema parse_schema(std::string_view text) {
  parsed_schema result;
  auto s = trim(text);
  if (!s.empty() && s.front() == '(' && s.back() == ')')
    s = trim(s.substr(1, s.size() - 2));
  if (s.empty()) {
    result.problem = "an empty schema (give name:type, ...)";
    return result;
  }
  while (true) {
    auto comma = s.find(',');
    auto item = trim(s.substr(0, comma));
    auto colon = item.find(':');
    if (colon == std::string_view::npos) {
      result.problem = fmt::format("'{}' is not name:type", item);
      return result;
    }
    field f;
    auto name = trim(item.substr(0, colon));
    auto type = trim(item.substr(colon + 1));
    if (!is_field_name(name)) {
      result.problem = fmt::format(
        "'{}' is not a field name (letters, digits, '_'; not starting with a "
        "digit; at most 128 bytes)",
        name);
      return result;
    }
    if (!type.empty() && type.back() == '?') {
      f.nullable = true;
      type = trim(type.substr(0, type.size() - 1));
    }
    auto t = parse_field_type(type);
    if (!t) {
      result.problem = fmt::format(
        "field '{}': unknown type '{}' (int64, double, bool, string, bytes, "
        "timestamp)",
        name, type);
      return result;
    }
    if (result.value.find(name)) {
      result.problem = fmt::format("field '{}' appears twice", name);
      return result;
    }
    f.name = std::string{name};
    f.type = *t;
    result.value.fields.push_back(std::move(f));
    if (comma == std::string_view::npos)
      break;
    s = s.substr(comma + 1);
  }
  return result;
}

namespace default_schema {

schema numbers() {
  return schema{{{"value", field_type::int64, false}}};
}

schema lines() {
  return schema{{{"value", field_type::string, false}}};
}

schema keyed_numbers() {
  return schema{{{"key", field_type::string, false},
                 {"value", field_type::int64, false}}};
}

schema keyed_lines() {
  return schema{{{"key", field_type::string, false},
                 {"value", field_type::string, false}}};
}

bool matches(const schema& s) {
  // Without building the four schemas: record adapters ask per row.
  auto& f = s.fields;
  auto is_value = [](const field& v) {
    return v.name == "value" && !v.nullable
           && (v.type == field_type::int64 || v.type == field_type::string);
  };
  if (f.size() == 1)
    return is_value(f[0]);
  return f.size() == 2 && f[0].name == "key" && f[0].type == field_type::string
         && !f[0].nullable && is_value(f[1]);
}

} // namespace default_schema

} // namespace weir
