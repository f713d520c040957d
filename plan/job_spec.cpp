#include "plan/job_spec.hpp"

#include <algorithm>
#include <cctype>
#include <utility>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "config/input_file.hpp"
#include "config/parse.hpp"
#include "messages/errors.hpp"
#include "operators/registry.hpp"
#include "plan/paths.hpp"
#include "plan/schemas.hpp"
#include "plan/validation.hpp"

namespace weir {

namespace {

using json = nlohmann::json;

/// A problem found while reading the document: one line without the origin.
struct field_error {
  std::string what;
};

[[noreturn]] void fail(std::string what) {
  throw field_error{std::move(what)};
}

caf::error spec_error(const std::string& origin, const std::string& what) {
  return make_error(errc::invalid_job, fmt::format("{}: {}", origin, what));
}

/// "a string", "an object", ... for "expected X, got Y" messages.
std::string type_name(const json& j) {
  switch (j.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "an object";
    case json::value_t::array:
      return "an array";
    case json::value_t::string:
      return fmt::format("a string ({})", j.dump());
    case json::value_t::boolean:
      return fmt::format("a bool ({})", j.dump());
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return fmt::format("a number ({})", j.dump());
    default:
      return "a binary value";
  }
}

std::string join(const std::vector<std::string>& xs) {
  return fmt::format("{}", fmt::join(xs, ", "));
}

std::vector<std::string> keys(const std::map<std::string, std::string>& m) {
  std::vector<std::string> result;
  for (auto& kv : m)
    result.push_back(kv.first);
  return result;
}

std::string known_params(const std::map<std::string, std::string>& params) {
  if (params.empty())
    return "the job has no parameters";
  return "known: " + join(keys(params));
}

// -- syntax errors ---------------------------------------------------------

/// 1-based line and column (in characters, not bytes) of the byte at
/// 0-based offset `pos` of `text`.
std::pair<size_t, size_t> line_and_column(std::string_view text, size_t pos) {
  pos = std::min(pos, text.size());
  size_t line = 1;
  size_t column = 1;
  for (size_t i = 0; i < pos; ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) {
      ++column; // count UTF-8 lead bytes only
    }
  }
  return {line, column};
}

/// Turns nlohmann's "[json.exception.parse_error.101] parse error at line 3,
/// column 17: syntax error while parsing object - unexpected '}'; ..." into
/// "syntax error: unexpected '}'; ...", and "[json.exception.out_of_range.406]
/// number overflow parsing '1e400'" into "number overflow parsing '1e400'".
std::string syntax_message(const std::string& what) {
  std::string msg = what;
  if (msg.rfind("[json.exception.", 0) == 0)
    if (auto end = msg.find("] "); end != std::string::npos)
      msg = msg.substr(end + 2);
  if (auto pos = msg.find("parse error"); pos != std::string::npos) {
    msg = msg.substr(pos);
    if (auto colon = msg.find(": "); colon != std::string::npos)
      msg = msg.substr(colon + 2);
  }
  if (auto dash = msg.find(" - "); dash != std::string::npos
                                   && msg.compare(0, 12, "syntax error") == 0)
    msg = "syntax error: " + msg.substr(dash + 3);
  return msg;
}

/// nlohmann's DOM builder that keeps a parse error and where it happened
/// instead of throwing: a number too large for a double (`1e400`) is an
/// `out_of_range` error whose exception carries no position.
class located_dom_parser : public nlohmann::detail::json_sax_dom_parser<json> {
public:
  explicit located_dom_parser(json& doc)
    : nlohmann::detail::json_sax_dom_parser<json>(doc, false) {
  }

  template <class Exception>
  bool parse_error(std::size_t position, const std::string&,
                   const Exception& ex) {
    error_position = position;
    error = ex.what();
    return false;
  }

  std::size_t error_position = 0; ///< bytes read up to the error
  std::string error;              ///< "" when the document parsed
};

// -- fields ------------------------------------------------------------------

void check_fields(const json& obj, const std::string& where,
                  const std::vector<std::string>& known) {
  for (auto& item : obj.items()) {
    bool found = false;
    for (auto& k : known)
      found = found || item.key() == k;
    if (!found)
      fail(fmt::format("{}{}: unknown field (known: {})", where, item.key(),
                       join(known)));
  }
}

const json* optional_field(const json& obj, const char* key) {
  auto i = obj.find(key);
  return i == obj.end() ? nullptr : &*i;
}

const json& required_field(const json& obj, const std::string& where,
                           const char* key) {
  auto i = obj.find(key);
  if (i == obj.end())
    fail(fmt::format("{}{}: missing", where, key));
  return *i;
}

std::string as_string(const json& j, const std::string& field) {
  if (!j.is_string())
    fail(fmt::format("{}: expected a string, got {}", field, type_name(j)));
  return j.get<std::string>();
}

std::string non_empty_string(const json& j, const std::string& field) {
  auto s = as_string(j, field);
  if (s.empty())
    fail(fmt::format("{}: must not be empty", field));
  return s;
}

/// A job name, vertex id or operator name: not empty, at most
/// max_name_bytes long.
std::string name_string(const json& j, const std::string& field) {
  auto s = non_empty_string(j, field);
  if (auto problem = name_length_problem(field, s); !problem.empty())
    fail(problem);
  return s;
}

/// Reads a parallelism; `subject` prefixes the range error (e.g.
/// "vertices[0] ('lines'): ").
int32_t as_parallelism(const json& j, const std::string& field,
                       const std::string& subject) {
  if (!j.is_number_integer())
    fail(fmt::format("{}: expected an integer, got {}", field, type_name(j)));
  if (j.is_number_unsigned() && j.get<uint64_t>() > uint64_t{max_parallelism})
    fail(fmt::format("{}parallelism {} is outside [1, {}]", subject,
                     j.get<uint64_t>(), max_parallelism));
  auto p = j.get<int64_t>();
  if (p < 1 || p > max_parallelism)
    fail(fmt::format("{}parallelism {} is outside [1, {}]", subject, p,
                     max_parallelism));
  return static_cast<int32_t>(p);
}

bool valid_param_name(const std::string& name) {
  if (name.empty())
    return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-'
        && c != '.')
      return false;
  return true;
}

/// Reads an object of parameters whose values are strings, numbers or bools.
std::map<std::string, std::string> as_params(const json& j,
                                             const std::string& field,
                                             bool check_names) {
  if (!j.is_object())
    fail(fmt::format("{}: expected an object, got {}", field, type_name(j)));
  std::map<std::string, std::string> result;
  for (auto& item : j.items()) {
    auto& v = item.value();
    auto name = fmt::format("{}.{}", field, item.key());
    if (check_names && !valid_param_name(item.key()))
      fail(fmt::format("{}: invalid parameter name (use letters, digits, "
                       "'_', '-' and '.')",
                       name));
    if (v.is_string())
      result.emplace(item.key(), v.get<std::string>());
    else if (v.is_boolean() || v.is_number())
      result.emplace(item.key(), v.dump());
    else
      fail(fmt::format("{}: expected a string, number or bool, got {}", name,
                       type_name(v)));
  }
  return result;
}

/// Replaces every `${name}` in `value` by the job parameter `name`.
std::string substitute(const std::string& value,
                       const std::map<std::string, std::string>& params,
                       const std::string& where) {
  std::string result;
  size_t pos = 0;
  for (;;) {
    auto open = value.find("${", pos);
    if (open == std::string::npos)
      break;
    auto close = value.find('}', open + 2);
    if (close == std::string::npos)
      fail(fmt::format("{}: '${{' without closing '}}' in '{}'", where, value));
    auto name = value.substr(open + 2, close - open - 2);
    auto i = params.find(name);
    if (i == params.end())
      fail(fmt::format("{}: unknown job parameter '${{{}}}' ({})", where, name,
                       known_params(params)));
    result.append(value, pos, open - pos);
    result += i->second;
    pos = close + 1;
  }
  result.append(value, pos, std::string::npos);
  return result;
}

std::string vertex_label(size_t i, const std::string& id) {
  return fmt::format("vertices[{}] ('{}')", i, id);
}

std::map<std::string, std::string>
substitute_all(const spec_vertex& v, size_t index,
               const std::map<std::string, std::string>& params) {
  std::map<std::string, std::string> result;
  for (auto& [key, value] : v.params) {
    auto where = fmt::format("{}: parameter '{}'", vertex_label(index, v.id),
                             key);
    result.emplace(key, substitute(value, params, where));
  }
  return result;
}

/// A duration of "watermarks": "5 s", "200 ms", or a number of ms; at
/// least 0, at most a year (an event time ± it stays far from overflow).
int64_t watermark_duration(const json& j, const std::string& field) {
  std::optional<std::chrono::milliseconds> d;
  if (j.is_number_integer())
    d = std::chrono::milliseconds{j.get<int64_t>()};
  else if (j.is_string())
    d = detail::parse_value<std::chrono::milliseconds>(j.get<std::string>());
  else
    fail(fmt::format("{}: expected a duration (\"5 s\") or milliseconds, "
                     "got {}",
                     field, type_name(j)));
  constexpr int64_t year_ms = int64_t{366} * 24 * 3600 * 1000;
  if (!d)
    fail(fmt::format("{}: '{}' is not a duration (e.g. \"5 s\", \"200 ms\")",
                     field, j.get<std::string>()));
  if (d->count() < 0 || d->count() > year_ms)
    fail(fmt::format("{}: {} ms is outside [0, {}] (a year)", field,
                     d->count(), year_ms));
  return d->count();
}

/// A vertex's "watermarks" (docs/event-time.md § Watermarks).
watermark_spec read_watermarks(const json& j, const std::string& where) {
  if (!j.is_object())
    fail(fmt::format("{}: expected an object, got {}", where, type_name(j)));
  check_fields(j, where + ".",
               {"field", "strategy", "max-out-of-orderness", "idle-timeout"});
  watermark_spec w;
  w.field = non_empty_string(required_field(j, where + ".", "field"),
                             where + ".field");
  std::string strategy = "bounded-out-of-orderness";
  if (auto s = optional_field(j, "strategy"))
    strategy = as_string(*s, where + ".strategy");
  auto delay = optional_field(j, "max-out-of-orderness");
  if (strategy == "monotonous") {
    if (delay != nullptr)
      fail(fmt::format("{}.max-out-of-orderness: monotonous timestamps never "
                       "come out of order (leave it out, or use the strategy "
                       "bounded-out-of-orderness)",
                       where));
  } else if (strategy == "bounded-out-of-orderness") {
    if (delay == nullptr)
      fail(fmt::format("{}.max-out-of-orderness: missing (how far behind the "
                       "largest event time rows may come, e.g. \"5 s\")",
                       where));
    w.max_out_of_orderness_ms = watermark_duration(
      *delay, where + ".max-out-of-orderness");
  } else {
    fail(fmt::format("{}.strategy: unknown strategy '{}' (known: "
                     "bounded-out-of-orderness, monotonous)",
                     where, strategy));
  }
  if (auto idle = optional_field(j, "idle-timeout"))
    w.idle_timeout_ms = watermark_duration(*idle, where + ".idle-timeout");
  return w;
}

spec_vertex read_vertex(const json& j, size_t i) {
  auto where = fmt::format("vertices[{}]", i);
  if (!j.is_object())
    fail(fmt::format("{}: expected an object, got {}", where, type_name(j)));
  where += '.';
  check_fields(j, where,
               {"id", "operator", "params", "parallelism", "watermarks"});
  spec_vertex v;
  v.id = name_string(required_field(j, where, "id"), where + "id");
  v.op = name_string(required_field(j, where, "operator"), where + "operator");
  if (auto p = optional_field(j, "params"))
    v.params = as_params(*p, where + "params", false);
  if (auto p = optional_field(j, "parallelism"))
    v.parallelism = as_parallelism(*p, where + "parallelism",
                                   vertex_label(i, v.id) + ": ");
  if (auto w = optional_field(j, "watermarks"))
    v.watermarks = read_watermarks(*w, where + "watermarks");
  return v;
}

/// An edge's "key": a field name or a non-empty array of field names.
std::vector<std::string> key_fields(const json& j, const std::string& field) {
  if (j.is_string())
    return {non_empty_string(j, field)};
  if (!j.is_array())
    fail(fmt::format("{}: expected a field name or an array of field names, "
                     "got {}",
                     field, type_name(j)));
  if (j.empty())
    fail(fmt::format("{}: must name at least one field", field));
  std::vector<std::string> names;
  for (size_t i = 0; i < j.size(); ++i)
    names.push_back(non_empty_string(j[i], fmt::format("{}[{}]", field, i)));
  return names;
}

spec_edge read_edge(const json& j, size_t i) {
  auto where = fmt::format("edges[{}]", i);
  if (!j.is_object())
    fail(fmt::format("{}: expected an object, got {}", where, type_name(j)));
  where += '.';
  check_fields(j, where, {"from", "to", "partitioning", "key", "output"});
  spec_edge e;
  e.from = as_string(required_field(j, where, "from"), where + "from");
  e.to = as_string(required_field(j, where, "to"), where + "to");
  if (auto p = optional_field(j, "partitioning")) {
    auto text = as_string(*p, where + "partitioning");
    e.part = parse_partitioning(text);
    if (!e.part)
      fail(fmt::format("{}partitioning: unknown partitioning '{}' (known: "
                       "forward, hash, rebalance, broadcast)",
                       where, text));
  }
  if (auto o = optional_field(j, "output"))
    e.output = non_empty_string(*o, where + "output");
  if (auto k = optional_field(j, "key")) {
    e.key = key_fields(*k, where + "key");
    if (e.part != partitioning::hash)
      fail(fmt::format("edge '{}' -> '{}': \"key\" needs \"partitioning\": "
                       "\"hash\"",
                       e.from, e.to));
  }
  return e;
}

const json& array_field(const json& doc, const char* key) {
  auto& j = required_field(doc, "", key);
  if (!j.is_array())
    fail(fmt::format("{}: expected an array, got {}", key, type_name(j)));
  return j;
}

job_spec read_spec(const json& doc, std::string origin) {
  if (!doc.is_object())
    fail(fmt::format("expected an object at the top level, got {}",
                     type_name(doc)));
  check_fields(doc, "",
               {"name", "parallelism", "params", "vertices", "edges", "config"});
  job_spec spec;
  spec.origin = std::move(origin);
  spec.name = name_string(required_field(doc, "", "name"), "name");
  if (auto p = optional_field(doc, "parallelism"))
    spec.parallelism = as_parallelism(*p, "parallelism", "");
  if (auto p = optional_field(doc, "params"))
    spec.params = as_params(*p, "params", true);
  if (auto c = optional_field(doc, "config"))
    spec.config = as_params(*c, "config", false);
  auto& vertices = array_field(doc, "vertices");
  for (size_t i = 0; i < vertices.size(); ++i)
    spec.vertices.push_back(read_vertex(vertices[i], i));
  if (optional_field(doc, "edges") != nullptr) {
    auto& edges = array_field(doc, "edges");
    for (size_t i = 0; i < edges.size(); ++i)
      spec.edges.push_back(read_edge(edges[i], i));
  }
  // Every `${name}` must refer to a job parameter, whatever the arguments.
  for (size_t i = 0; i < spec.vertices.size(); ++i)
    substitute_all(spec.vertices[i], i, spec.params);
  return spec;
}

} // namespace

caf::expected<job_spec> parse_job_spec_text(std::string_view text,
                                            std::string origin) {
  json doc;
  located_dom_parser builder{doc};
  if (!json::sax_parse(text.begin(), text.end(), &builder)) {
    auto pos = builder.error_position;
    auto [line, column] = line_and_column(text, pos > 0 ? pos - 1 : 0);
    return make_error(errc::invalid_job,
                      fmt::format("{}:{}:{}: {}", origin, line, column,
                                  syntax_message(builder.error)));
  }
  try {
    return read_spec(doc, origin);
  } catch (const field_error& e) {
    return spec_error(origin, e.what);
  }
}

caf::expected<job_spec> parse_job_spec(const std::string& path) {
  auto file = read_input_file(path);
  if (!file.problem.empty())
    return spec_error(path, "cannot read file: " + file.problem);
  return parse_job_spec_text(file.text, path);
}

std::vector<std::string> param_names(const job_spec& spec) {
  return keys(spec.params);
}

caf::expected<std::map<std::string, std::string>>
parse_program_args(const std::vector<std::string>& args) {
  std::map<std::string, std::string> result;
  for (size_t i = 0; i < args.size(); ++i) {
    auto& arg = args[i];
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0)
      return make_error(errc::invalid_job,
                        fmt::format("program argument '{}': expected --name "
                                    "value or --name=value",
                                    arg));
    auto eq = arg.find('=');
    if (eq != std::string::npos) {
      result[arg.substr(2, eq - 2)] = arg.substr(eq + 1);
    } else if (i + 1 < args.size()) {
      result[arg.substr(2)] = args[++i];
    } else {
      return make_error(errc::invalid_job,
                        fmt::format("program argument '{}': missing value",
                                    arg));
    }
  }
  return result;
}

caf::expected<job_graph>
resolve_job_graph(const job_spec& spec,
                  const std::map<std::string, std::string>& program_args,
                  std::optional<int32_t> default_parallelism,
                  const ops::registry* operators) {
  auto& origin = spec.origin;
  if (default_parallelism
      && (*default_parallelism < 1 || *default_parallelism > max_parallelism))
    return spec_error(origin,
                      fmt::format("default parallelism (-p) {} is outside "
                                  "[1, {}]",
                                  *default_parallelism, max_parallelism));
  auto params = spec.params;
  for (auto& [key, value] : program_args) {
    auto i = params.find(key);
    if (i == params.end())
      return spec_error(origin,
                        fmt::format("program argument '--{}': not a parameter "
                                    "of the job ({})",
                                    key, known_params(spec.params)));
    i->second = value;
  }
  job_graph g;
  g.name = spec.name;
  g.config = spec.config;
  auto job_parallelism = default_parallelism.value_or(spec.parallelism);
  try {
    for (size_t i = 0; i < spec.vertices.size(); ++i) {
      auto& v = spec.vertices[i];
      g.vertices.push_back(vertex_spec{v.id, v.op,
                                       substitute_all(v, i, params),
                                       v.parallelism.value_or(
                                         job_parallelism), {}, v.watermarks});
    }
  } catch (const field_error& e) {
    return spec_error(origin, e.what);
  }
  for (auto& e : spec.edges) {
    auto part = partitioning::forward;
    if (e.part) {
      part = *e.part;
    } else {
      auto from = vertex_index(g, e.from);
      auto to = vertex_index(g, e.to);
      if (from >= 0 && to >= 0
          && g.vertices[static_cast<size_t>(from)].parallelism
               != g.vertices[static_cast<size_t>(to)].parallelism)
        part = partitioning::rebalance;
    }
    g.edges.push_back(edge_spec{e.from, e.to, part, e.key, e.output});
  }
  auto& reg = operators != nullptr ? *operators : ops::registry::builtin();
  make_paths_absolute(g, reg);
  if (auto err = validate_job_graph(g, client_validation(operators)))
    return spec_error(origin, describe(err));
  if (auto err = derive_schemas(g, reg))
    return spec_error(origin, describe(err));
  return g;
}

} // namespace weir
