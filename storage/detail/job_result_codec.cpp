#include "storage/detail/job_result_codec.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "messages/base64.hpp"
#include "messages/record.hpp"
#include "storage/detail/object_reader.hpp"
#include "storage/detail/record_codec.hpp"

namespace weir::storage::detail {

namespace {

/// A collect sink's rows: its vertex, its schema as to_string prints it,
/// and the batch as base64 of its binary form (exact for every type).
nlohmann::json encode(const collected_table& t) {
  return {{"sink", t.sink},
          {"schema", to_string(t.fields)},
          {"batch", base64_encode(encode(t.rows))}};
}

collected_table decode_table(object_reader& r) {
  collected_table t;
  t.sink = r.text("sink");
  auto parsed = parse_schema(r.text("schema"));
  if (!parsed.problem.empty()) {
    r.fail("schema", parsed.problem);
    return t;
  }
  t.fields = std::move(parsed.value);
  auto bytes = base64_decode(r.text("batch"));
  if (!bytes || !decode(*bytes, t.rows) || !t.rows.conforms_to(t.fields))
    r.fail("batch", "is not a batch of rows of the schema (base64 of its "
                    "binary form)");
  return t;
}

/// A result stored before rows: its records, as rows of the default schema
/// they fit (keyed if any has a key; int64 values if all are; else text).
collected_table decode_records(std::vector<object_reader>& stored) {
  std::vector<record> records;
  bool keyed = false;
  bool numbers = true;
  for (auto& r : stored) {
    record x;
    x.key = r.text("key");
    x.text = r.text("text");
    x.num = r.int64("num");
    x.timestamp = r.int64("timestamp");
    x.is_text = r.boolean("is_text");
    keyed = keyed || !x.key.empty();
    numbers = numbers && !x.is_text;
    records.push_back(std::move(x));
  }
  collected_table t;
  t.fields = keyed ? (numbers ? default_schema::keyed_numbers()
                              : default_schema::keyed_lines())
                   : (numbers ? default_schema::numbers()
                              : default_schema::lines());
  t.rows.reset(t.fields);
  for (auto& x : records)
    if (!append_record(t.rows, t.fields, x)) {
      // An int64 among texts: as its text form.
      auto text = x;
      text.is_text = true;
      text.text = std::to_string(x.num);
      append_record(t.rows, t.fields, text);
    }
  return t;
}

job_state decode_state(object_reader& r) {
  auto name = r.text("state");
  if (auto state = parse_job_state(name))
    return *state;
  r.fail("state", fmt::format("has unknown value '{}'", printable(name)));
  return job_state::created;
}

vertex_metrics decode_vertex(object_reader& r) {
  vertex_metrics v;
  v.vertex = r.text("vertex");
  v.records_in = r.int64("records_in");
  v.records_out = r.int64("records_out");
  v.counters = r.int64_map("counters");
  if (r.has("records_combined"))
    v.records_combined = r.int64("records_combined");
  return v;
}

} // namespace

std::string encode_job_result(const job_result& r, bool dirty) {
  auto doc = new_record();
  doc["dirty"] = dirty;
  doc["id"] = r.id.to_string();
  doc["name"] = r.name;
  doc["state"] = to_string(r.state);
  doc["error"] = r.error;
  doc["start_time_ms"] = r.start_time_ms;
  doc["end_time_ms"] = r.end_time_ms;
  auto& metrics = doc["metrics"] = nlohmann::json::object();
  metrics["records_in"] = r.metrics.records_in;
  metrics["records_out"] = r.metrics.records_out;
  if (r.metrics.records_skipped > 0) {
    metrics["records_skipped"] = r.metrics.records_skipped;
    metrics["skipped_note"] = r.metrics.skipped_note;
  }
  if (!r.metrics.vertices.empty()) {
    auto& vertices = metrics["vertices"] = nlohmann::json::array();
    for (auto& v : r.metrics.vertices) {
      vertices.push_back({{"vertex", v.vertex},
                          {"records_in", v.records_in},
                          {"records_out", v.records_out},
                          {"counters", v.counters}});
      if (v.records_combined > 0)
        vertices.back()["records_combined"] = v.records_combined;
    }
  }
  auto& collected = doc["collected_rows"] = nlohmann::json::array();
  for (auto& x : r.collected)
    collected.push_back(encode(x));
  if (r.graph_fingerprint != 0)
    doc["graph_fingerprint"] = fmt::format("{:016x}", r.graph_fingerprint);
  if (r.exit_status != 0)
    doc["exit_status"] = r.exit_status;
  return dump_record(doc);
}

caf::expected<job_result_entry> decode_job_result(std::string_view key,
                                                  std::string_view value) {
  auto rec = open_record(column::job_results, key, value);
  if (!rec)
    return std::move(rec.error());
  std::string problem;
  object_reader r{rec->doc, {}, problem};
  job_result_entry entry;
  entry.dirty = r.boolean("dirty");
  auto& res = entry.result;
  res.id = r.id("id");
  res.name = r.text("name");
  res.state = decode_state(r);
  res.error = r.text("error");
  res.start_time_ms = r.int64("start_time_ms");
  res.end_time_ms = r.int64("end_time_ms");
  auto metrics = r.object("metrics");
  res.metrics.records_in = metrics.int64("records_in");
  res.metrics.records_out = metrics.int64("records_out");
  if (metrics.has("records_skipped")) {
    res.metrics.records_skipped = metrics.int64("records_skipped");
    res.metrics.skipped_note = metrics.text("skipped_note");
  }
  if (metrics.has("vertices")) // (absent in results stored before weir kept them)
    for (auto& v : metrics.objects("vertices"))
      res.metrics.vertices.push_back(decode_vertex(v));
  if (rec->doc.contains("collected_rows")) {
    for (auto& x : r.objects("collected_rows"))
      res.collected.push_back(decode_table(x));
  } else if (r.has("collected")) {
    // (stored before rows: records)
    auto old = r.objects("collected");
    if (!old.empty())
      res.collected.push_back(decode_records(old));
  }
  if (problem.empty() && rec->doc.contains("graph_fingerprint")) {
    // (absent in results stored before weir recorded it)
    auto text = r.text("graph_fingerprint");
    char* end = nullptr;
    res.graph_fingerprint = std::strtoull(text.c_str(), &end, 16);
    if (problem.empty()
        && (text.size() != 16 || end != text.c_str() + text.size()))
      problem = "field 'graph_fingerprint' is not 16 hex digits";
  }
  if (rec->doc.contains("exit_status")) // (a failed driver's only)
    res.exit_status = static_cast<int32_t>(r.int64("exit_status"));
  if (problem.empty() && res.id != rec->id)
    problem = fmt::format("key does not match the record's id {}",
                          res.id.to_string());
  if (!problem.empty())
    return record_problem(column::job_results, key, problem);
  return entry;
}

} // namespace weir::storage::detail
