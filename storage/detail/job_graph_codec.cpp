#include "storage/detail/job_graph_codec.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "storage/detail/object_reader.hpp"
#include "storage/detail/record_codec.hpp"

namespace weir::storage::detail {

namespace {

nlohmann::json encode(const vertex_spec& v) {
  auto params = nlohmann::json::object();
  for (auto& [key, value] : v.params)
    params[key] = value;
  auto out = nlohmann::json::object();
  out["id"] = v.id;
  out["op"] = v.op;
  out["params"] = std::move(params);
  out["parallelism"] = v.parallelism;
  return out;
}

nlohmann::json encode(const edge_spec& e) {
  auto out = nlohmann::json::object();
  out["from"] = e.from;
  out["to"] = e.to;
  out["partitioning"] = to_string(e.part);
  return out;
}

vertex_spec decode_vertex(object_reader& r) {
  vertex_spec v;
  v.id = r.text("id");
  v.op = r.text("op");
  v.params = r.text_map("params");
  v.parallelism = r.int32("parallelism");
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
  return e;
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
  if (problem.empty() && g.id != rec->id)
    problem = fmt::format("key does not match the record's id {}",
                          g.id.to_string());
  if (problem.empty())
    problem = check_job_graph_shape(g);
  if (!problem.empty())
    return record_problem(column::job_graphs, key, problem);
  return g;
}

} // namespace weir::storage::detail
