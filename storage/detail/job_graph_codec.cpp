#include "storage/detail/job_graph_codec.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "messages/errors.hpp"
#include "storage/detail/object_reader.hpp"
#include "storage/detail/record_codec.hpp"

namespace weir::storage::detail {

namespace {

nlohmann::json encode(const schema& s) {
  auto out = nlohmann::json::array();
  for (auto& f : s.fields)
    out.push_back({{"name", f.name},
                   {"type", std::string{to_string(f.type)}},
                   {"nullable", f.nullable}});
  return out;
}

nlohmann::json encode(const vertex_spec& v) {
  auto params = nlohmann::json::object();
  for (auto& [key, value] : v.params)
    params[key] = value;
  auto out = nlohmann::json::object();
  out["id"] = v.id;
  out["op"] = v.op;
  out["params"] = std::move(params);
  out["parallelism"] = v.parallelism;
  // Absent when empty (sinks), so a graph without schemas is stored as
  // before rows, with the same fingerprint.
  if (!v.output.empty())
    out["output"] = encode(v.output);
  // Absent without watermarks, for the same reason.
  if (v.watermarks.enabled())
    out["watermarks"] = {
      {"field", v.watermarks.field},
      {"max_out_of_orderness_ms", v.watermarks.max_out_of_orderness_ms},
      {"idle_timeout_ms", v.watermarks.idle_timeout_ms},
      {"interval_ms", v.watermarks.interval_ms}};
  if (!v.side_outputs.empty()) {
    auto sides = nlohmann::json::object();
    for (auto& [name, rows] : v.side_outputs)
      sides[name] = encode(rows);
    out["side_outputs"] = std::move(sides);
  }
  return out;
}

nlohmann::json encode(const edge_spec& e) {
  auto out = nlohmann::json::object();
  out["from"] = e.from;
  out["to"] = e.to;
  out["partitioning"] = to_string(e.part);
  if (!e.key.empty())
    out["key"] = e.key;
  if (!e.output.empty())
    out["output"] = e.output;
  return out;
}

schema decode_schema(object_reader& r, std::string_view name) {
  schema s;
  for (auto& f : r.objects(name)) {
    field x;
    x.name = f.text("name");
    auto type = f.text("type");
    if (auto t = parse_field_type(type))
      x.type = *t;
    else
      f.fail("type", fmt::format("has unknown value '{}'", printable(type)));
    x.nullable = f.boolean("nullable");
    s.fields.push_back(std::move(x));
  }
  return s;
}

vertex_spec decode_vertex(object_reader& r) {
  vertex_spec v;
  v.id = r.text("id");
  v.op = r.text("op");
  v.params = r.text_map("params");
  v.parallelism = r.int32("parallelism");
  // Records stored before rows have no schemas: the Dispatcher derives
  // them (plan/schemas.hpp, derive_missing_schemas).
  if (r.has("output"))
    v.output = decode_schema(r, "output");
  if (r.has("watermarks")) {
    auto w = r.object("watermarks");
    v.watermarks.field = w.text("field");
    v.watermarks.max_out_of_orderness_ms = w.int64("max_out_of_orderness_ms");
    v.watermarks.idle_timeout_ms = w.int64("idle_timeout_ms");
    v.watermarks.interval_ms = w.int64("interval_ms");
  }
  if (r.has("side_outputs")) {
    auto sides = r.object("side_outputs");
    for (auto& name : sides.keys())
      v.side_outputs[name] = decode_schema(sides, name);
  }
  return v;
}

edge_spec decode_edge(object_reader& r) {
  edge_spec e;
  e.from = r.text("from");
  e.to = r.text("to");
  auto name = r.text("partitioning");
  if (auto part = parse_partitioning(name))
    e.part = *part;
  else
    r.fail("partitioning", fmt::format("has unknown value '{}'",
                                       printable(name)));
  if (r.has("key"))
    e.key = r.texts("key");
  if (r.has("output"))
    e.output = r.text("output");
  return e;
}

nlohmann::json encode(const std::vector<blob_ref>& blobs) {
  auto out = nlohmann::json::array();
  for (auto& b : blobs)
    out.push_back({{"name", b.name}, {"hash", b.hash}, {"origin", b.origin}});
  return out;
}

std::vector<blob_ref> decode_blobs(object_reader& r, std::string_view name) {
  std::vector<blob_ref> out;
  for (auto& b : r.objects(name))
    out.push_back(blob_ref{b.text("name"), b.text("hash"), b.text("origin")});
  return out;
}

user_code decode_code(object_reader r) {
  user_code c;
  c.libraries = decode_blobs(r, "libraries");
  c.files = decode_blobs(r, "files");
  for (auto& [i, path] : r.text_map("classpath"))
    c.classpath.push_back(path);
  c.always_ship = r.boolean("always_ship");
  return c;
}

} // namespace

std::string encode_job_graph(const job_graph& g) {
  auto doc = new_record();
  doc["id"] = g.id.to_string();
  doc["name"] = g.name;
  auto& vertices = doc["vertices"] = nlohmann::json::array();
  for (auto& v : g.vertices)
    vertices.push_back(encode(v));
  auto& edges = doc["edges"] = nlohmann::json::array();
  for (auto& e : g.edges)
    edges.push_back(encode(e));
  if (!g.config.empty())
    doc["config"] = g.config;
  if (!g.config_origins.empty())
    doc["config_origins"] = g.config_origins;
  if (!g.code.empty()) {
    // Classpath entries as an object ("0", "1", ...) keep the reader's
    // one text-map form.
    auto classpath = nlohmann::json::object();
    for (size_t i = 0; i < g.code.classpath.size(); ++i)
      classpath[fmt::format("{:04}", i)] = g.code.classpath[i];
    doc["code"] = {{"libraries", encode(g.code.libraries)},
                   {"files", encode(g.code.files)},
                   {"classpath", classpath},
                   {"always_ship", g.code.always_ship}};
  }
  if (g.priority != job_priority::normal)
    doc["priority"] = static_cast<int>(g.priority);
  if (g.application.valid())
    doc["application"] = g.application.to_string();
  return dump_record(doc);
}

caf::expected<job_graph> decode_job_graph(std::string_view key,
                                          std::string_view value) {
  auto rec = open_record(column::job_graphs, key, value);
  if (!rec)
    return std::move(rec.error());
  std::string problem;
  object_reader r{rec->doc, {}, problem};
  job_graph g;
  g.id = r.id("id");
  g.name = r.text("name");
  for (auto& v : r.objects("vertices"))
    g.vertices.push_back(decode_vertex(v));
  for (auto& e : r.objects("edges"))
    g.edges.push_back(decode_edge(e));
  if (rec->doc.contains("config"))
    g.config = r.text_map("config");
  if (rec->doc.contains("config_origins"))
    g.config_origins = r.text_map("config_origins");
  if (rec->doc.contains("code"))
    g.code = decode_code(r.object("code"));
  if (rec->doc.contains("application"))
    g.application = r.id("application");
  if (rec->doc.contains("priority")) {
    auto p = r.int32("priority");
    if (p < -1 || p > 1)
      r.fail("priority", fmt::format("has unknown value {}", p));
    else
      g.priority = static_cast<job_priority>(p);
  }
  if (problem.empty() && g.id != rec->id)
    problem = fmt::format("key does not match the record's id {}",
                          g.id.to_string());
  if (problem.empty())
    if (auto err = check_job_graph_shape(g))
      problem = describe(err);
  if (!problem.empty())
    return record_problem(column::job_graphs, key, problem);
  return g;
}

} // namespace weir::storage::detail
