#include "storage/job_graph_store.hpp"

#include <xxhash.h>

#include "messages/errors.hpp"
#include "storage/detail/job_graph_codec.hpp"
#include "storage/detail/typed_table.hpp"

namespace weir::storage {

uint64_t job_graph_fingerprint(const job_graph& g) {
  auto as_written = g;
  as_written.config_origins.clear(); // not part of the job's identity
  for (auto& v : as_written.vertices) {
    v.output = schema{};
    v.side_outputs.clear();
    // The JobMaster's setting (pipeline.auto-watermark-interval).
    v.watermarks.interval_ms = watermark_spec{}.interval_ms;
  }
  for (auto& e : as_written.edges)
    if (e.key == std::vector<std::string>{"key"})
      e.key.clear();
  auto bytes = detail::encode_job_graph(as_written);
  return XXH3_64bits(bytes.data(), bytes.size());
}


caf::error job_graph_store::put(const job_graph& g) {
  return kv_.put(column::job_graphs, g.id.to_string(),
                 detail::encode_job_graph(g), durability::synced);
}

caf::error job_graph_store::remove(job_id id) {
  return kv_.remove(column::job_graphs, id.to_string(), durability::synced);
}

caf::expected<std::optional<job_graph>> job_graph_store::get(job_id id) {
  return detail::get_decoded<job_graph>(kv_, column::job_graphs, id.to_string(),
                                        detail::decode_job_graph);
}

caf::expected<stored_graphs> job_graph_store::load_all() {
  stored_graphs result;
  std::vector<std::string> bad_keys;
  if (auto err = detail::scan_decoded(kv_, column::job_graphs,
                                      detail::decode_job_graph, result.graphs,
                                      result.problems, &bad_keys))
    return err;
  // Lines and keys were added in step.
  for (size_t i = 0; i < bad_keys.size(); ++i)
    if (auto id = job_id::parse(bad_keys[i]); id && id->valid())
      result.unreadable.push_back({*id, result.problems[i]});
  return result;
}

} // namespace weir::storage
