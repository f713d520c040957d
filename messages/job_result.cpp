#include "messages/job_result.hpp"

#include <algorithm>
#include <chrono>
#include <stdexcept>

namespace weir {

const vertex_metrics& job_result::vertex(const std::string& vertex_id) const {
  for (auto& v : metrics.vertices)
    if (v.vertex == vertex_id)
      return v;
  throw std::out_of_range("job " + id.to_string() + " has no vertex '"
                          + vertex_id + "'");
}

int64_t job_result::counter(const std::string& vertex_id,
                            const std::string& counter_name) const {
  auto& v = vertex(vertex_id);
  auto i = v.counters.find(counter_name);
  if (i == v.counters.end())
    throw std::out_of_range("job " + id.to_string() + ": vertex '" + vertex_id
                            + "' has no counter '" + counter_name + "'");
  return i->second;
}

stats_summary summarize(std::vector<int64_t> values) {
  if (values.empty())
    return {};
  std::sort(values.begin(), values.end());
  int64_t sum = 0;
  for (auto x : values)
    sum += x;
  auto at = [&](double q) {
    // Nearest rank, as Flink's DescriptiveStatisticsHistogram.
    auto rank = static_cast<size_t>(q * static_cast<double>(values.size()));
    return static_cast<double>(values[std::min(rank, values.size() - 1)]);
  };
  return stats_summary{values.front(), values.back(),
                       sum / static_cast<int64_t>(values.size()),
                       at(0.5), at(0.9), at(0.95), at(0.99), at(0.999)};
}

bool operator==(const job_result& a, const job_result& b) {
  return a.id == b.id && a.name == b.name && a.state == b.state
         && a.error == b.error && a.start_time_ms == b.start_time_ms
         && a.end_time_ms == b.end_time_ms
         && a.metrics.records_in == b.metrics.records_in
         && a.metrics.records_out == b.metrics.records_out
         && a.metrics.vertices == b.metrics.vertices
         && a.collected == b.collected
         && a.graph_fingerprint == b.graph_fingerprint
         && a.exit_status == b.exit_status;
}

bool operator==(const vertex_metrics& a, const vertex_metrics& b) {
  return a.vertex == b.vertex && a.records_in == b.records_in
         && a.records_out == b.records_out && a.counters == b.counters
         && a.records_combined == b.records_combined;
}

void add_vertex_metrics(std::vector<vertex_metrics>& into,
                        const std::vector<vertex_metrics>& from) {
  for (auto& v : from) {
    auto same = [&](const vertex_metrics& x) { return x.vertex == v.vertex; };
    auto i = std::find_if(into.begin(), into.end(), same);
    if (i == into.end()) {
      into.push_back(v);
      continue;
    }
    i->records_in += v.records_in;
    i->records_out += v.records_out;
    i->records_combined += v.records_combined;
    for (auto& [name, value] : v.counters)
      i->counters[name] += value;
  }
}

std::vector<std::string> counter_lines(const io_metrics& m) {
  std::vector<std::string> lines;
  for (auto& v : m.vertices)
    for (auto& [name, value] : v.counters)
      lines.push_back("Counter " + v.vertex + "." + name + ": "
                      + std::to_string(value));
  return lines;
}

int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch())
    .count();
}

} // namespace weir
