#include "actors/job_master/adaptive_parallelism.hpp"

#include <algorithm>

#include "config/config.hpp"
#include "config/keys.hpp"

namespace weir {

adaptive_options adaptive_options::from(const configuration& cfg) {
  adaptive_options o;
  o.enabled = cfg.get(keys::scheduler) == "adaptive";
  o.reactive = cfg.get(keys::scheduler_mode) == "reactive";
  o.stabilization = cfg.get(keys::adaptive_stabilization_timeout);
  o.resource_wait = cfg.get(keys::adaptive_resource_wait_timeout);
  return o;
}

adaptive_parallelism::adaptive_parallelism(adaptive_options opts,
                                           job_graph configured,
                                           std::vector<int32_t> upper)
  : opts_(opts), configured_(std::move(configured)), upper_(std::move(upper)) {
  for (auto u : upper_)
    desired_ = std::max(desired_, u);
}

int32_t adaptive_parallelism::target(int32_t available) const {
  return std::max(0, std::min(desired_, available));
}

job_graph adaptive_parallelism::graph_at(int32_t n) const {
  auto g = configured_;
  for (size_t v = 0; v < g.vertices.size(); ++v)
    g.vertices[v].parallelism
      = std::max(1, std::min(v < upper_.size() ? upper_[v] : n, n));
  // A forward edge needs equal parallelism at both ends.
  for (bool changed = true; changed;) {
    changed = false;
    for (auto& e : g.edges) {
      if (e.part != partitioning::forward)
        continue;
      auto& a = g.vertices[static_cast<size_t>(vertex_index(g, e.from))];
      auto& b = g.vertices[static_cast<size_t>(vertex_index(g, e.to))];
      if (a.parallelism != b.parallelism) {
        a.parallelism = b.parallelism = std::min(a.parallelism, b.parallelism);
        changed = true;
      }
    }
  }
  return g;
}

std::optional<int32_t> adaptive_parallelism::scale_up(int32_t current,
                                                      int32_t available,
                                                      clock::time_point now) {
  if (target(available) <= current) {
    more_since_.reset();
    return std::nullopt;
  }
  if (!more_since_)
    more_since_ = now;
  if (now - *more_since_ < opts_.stabilization)
    return std::nullopt;
  more_since_.reset();
  return target(available);
}

} // namespace weir
