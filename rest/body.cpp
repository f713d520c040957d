#include "rest/body.hpp"

#include <fmt/format.h>

#include "messages/errors.hpp"
#include "messages/file_names.hpp"

namespace weir::rest {

namespace {

using nlohmann::json;

/// nlohmann's message without its "[json.exception.parse_error.101] ".
std::string plain(const std::string& what) {
  auto end = what.find("] ");
  return end == std::string::npos ? what : what.substr(end + 2);
}

caf::error invalid(std::string problem) {
  return make_error(errc::invalid_request, std::move(problem));
}

caf::error wrong_type(const std::string& name, const char* expected,
                      const json& value) {
  return invalid(fmt::format("field '{}' must be {}, not {}", name, expected,
                             value.type_name()));
}

/// The field, or nullptr when absent or null.
const json* field(const json& body, const std::string& name) {
  auto i = body.find(name);
  return i == body.end() || i->is_null() ? nullptr : &*i;
}

} // namespace

caf::expected<json> parse_body(const std::string& text) {
  if (text.find_first_not_of(" \t\r\n") == std::string::npos)
    return json::object();
  // Deeper nesting than any job spec has is refused while parsing: a
  // million nested arrays would overflow the stack of whatever walks the
  // tree afterwards (dump, copies).
  constexpr int max_depth = 64;
  bool too_deep = false;
  // What the tree takes is counted as it grows (a value at least the json
  // node and its container's share, a string or key its bytes too): a body
  // of a million small values takes 20 times its size as a tree. Past the
  // bound every further value is dropped, so the tree never grows past it.
  size_t tree_bytes = 0;
  bool too_large = false;
  auto guard = [&](int depth, json::parse_event_t event, json& parsed) {
    if (depth > max_depth)
      too_deep = true;
    switch (event) {
      case json::parse_event_t::key:
        tree_bytes += 96 + parsed.get_ref<const std::string&>().size();
        break;
      case json::parse_event_t::value:
        tree_bytes += parsed.is_string()
                        ? 80 + parsed.get_ref<const std::string&>().size()
                        : 32;
        break;
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        tree_bytes += 64;
        break;
      default:
        break;
    }
    too_large = too_large || tree_bytes > max_body_tree_bytes;
    return !too_deep && !too_large;
  };
  json body;
  try {
    body = json::parse(text, guard);
  } catch (const json::exception& e) {
    // Syntax, and numbers out of range (1e400): the client's mistake.
    if (!too_deep && !too_large)
      return invalid("the request body is not JSON: " + plain(e.what()));
  }
  if (too_deep)
    return invalid(
      fmt::format("the request body nests deeper than {} levels", max_depth));
  if (too_large)
    return invalid(
      fmt::format("{} {} MiB once parsed (a job spec takes far less)",
                  body_too_large, max_body_tree_bytes >> 20));
  if (!body.is_object())
    return invalid(
      fmt::format("the request body must be a JSON object, not {}",
                  body.type_name()));
  return body;
}

caf::expected<std::string> string_field(const json& body,
                                        const std::string& name,
                                        std::string fallback) {
  auto* x = field(body, name);
  if (x == nullptr)
    return fallback;
  if (!x->is_string())
    return wrong_type(name, "a string", *x);
  return x->get<std::string>();
}

caf::expected<bool> bool_field(const json& body, const std::string& name,
                               bool fallback) {
  auto* x = field(body, name);
  if (x == nullptr)
    return fallback;
  if (!x->is_boolean())
    return wrong_type(name, "true or false", *x);
  return x->get<bool>();
}

caf::expected<std::optional<int64_t>>
int_field(const json& body, const std::string& name, int64_t low,
          int64_t high) {
  auto* x = field(body, name);
  if (x == nullptr)
    return std::optional<int64_t>{};
  if (!x->is_number_integer())
    return wrong_type(name, "a whole number", *x);
  auto n = x->get<int64_t>();
  if (n < low || n > high)
    return invalid(fmt::format("field '{}': {} is outside [{}, {}]", name, n,
                               low, high));
  return std::optional<int64_t>{n};
}

caf::expected<std::vector<std::string>>
strings_field(const json& body, const std::string& name) {
  std::vector<std::string> out;
  auto* x = field(body, name);
  if (x == nullptr)
    return out;
  if (!x->is_array())
    return wrong_type(name, "an array of strings", *x);
  for (size_t i = 0; i < x->size(); ++i) {
    auto& item = (*x)[i];
    if (!item.is_string())
      return wrong_type(fmt::format("{}[{}]", name, i), "a string", item);
    out.push_back(item.get<std::string>());
  }
  return out;
}

caf::expected<std::vector<std::pair<std::string, std::string>>>
text_map_field(const json& body, const std::string& name) {
  std::vector<std::pair<std::string, std::string>> out;
  auto* x = field(body, name);
  if (x == nullptr)
    return out;
  if (!x->is_object())
    return wrong_type(name, "an object", *x);
  for (auto& [key, value] : x->items()) {
    if (value.is_string())
      out.emplace_back(key, value.get<std::string>());
    else if (value.is_number() || value.is_boolean())
      out.emplace_back(key, value.dump());
    else
      return wrong_type(fmt::format("{}.{}", name, key),
                        "a string, number or boolean", value);
  }
  return out;
}

caf::expected<std::string> absolute_directory(const std::string& given,
                                              const std::string& field) {
  // Flink's URIs: file:///tmp/x and file:/tmp/x are /tmp/x.
  auto dir = local_path(given);
  if (dir.empty() || dir[0] != '/')
    return invalid(fmt::format("field '{}': '{}' is not an absolute path",
                               field, given));
  return dir;
}

caf::expected<std::string> savepoint_directory(const std::string& given,
                                               const std::string& field) {
  if (given.empty())
    return std::string{};
  return absolute_directory(given, field);
}

} // namespace weir::rest
