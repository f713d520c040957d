#include "storage/job_graph_store.hpp"

#include "messages/errors.hpp"
#include "storage/detail/job_graph_codec.hpp"

namespace weir::storage {

caf::error job_graph_store::put(const job_graph& g) {
  return kv_.put(column::job_graphs, g.id.to_string(),
                 detail::encode_job_graph(g), durability::synced);
}

caf::error job_graph_store::remove(job_id id) {
  return kv_.remove(column::job_graphs, id.to_string(), durability::synced);
}

caf::expected<std::optional<job_graph>> job_graph_store::get(job_id id) {
  auto key = id.to_string();
  auto value = kv_.get(column::job_graphs, key);
  if (!value)
    return std::move(value.error());
  if (!*value)
    return std::optional<job_graph>{};
  auto g = detail::decode_job_graph(key, **value);
  if (!g)
    return std::move(g.error());
  return std::optional<job_graph>{std::move(*g)};
}

caf::expected<stored_graphs> job_graph_store::load_all() {
  stored_graphs result;
  auto err = kv_.scan(column::job_graphs, [&](auto key, auto value) {
    if (auto g = detail::decode_job_graph(key, value))
      result.graphs.push_back(std::move(*g));
    else
      result.problems.push_back(describe(g.error()));
  });
  if (err)
    return err;
  return result;
}

} // namespace weir::storage
