// The REST API's metric views (Flink's /jobmanager/metrics,
// /jobs/{jobid}/metrics, ...): metric names and values as Flink's
// MetricCollectionResponseBody and AggregatedMetricsResponseBody write
// them, over the metrics the Prometheus exposition shows too.
#include "rest/json.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include <fmt/format.h>

#include "messages/errors.hpp"
#include "metrics/metric_values.hpp"

namespace weir::rest {

namespace {

using nlohmann::json;

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  size_t from = 0;
  while (from <= text.size()) {
    auto to = std::min(text.find(',', from), text.size());
    if (to > from)
      out.push_back(text.substr(from, to - from));
    from = to + 1;
  }
  return out;
}

/// Flink's value text: a count as an integer, anything else as a number.
std::string value_text(double x) {
  if (std::isfinite(x) && x == std::floor(x) && std::abs(x) < 9.0e15)
    return fmt::format("{}", static_cast<int64_t>(x));
  return fmt::format("{}", x);
}

void append(metric_set& out, const std::string& prefix,
            const std::vector<metric_value>& values) {
  for (auto& m : values)
    out.emplace_back(prefix + m.name, m.value);
}

} // namespace

caf::expected<std::vector<std::string>> parse_aggregations(const std::string& text) {
  std::vector<std::string> out;
  for (auto a : split(text)) {
    std::transform(a.begin(), a.end(), a.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (a != "min" && a != "max" && a != "avg" && a != "sum")
      return make_error(errc::invalid_request,
                        fmt::format("query parameter 'agg': '{}' is not one "
                                    "of min, max, avg, sum", a));
    out.push_back(a);
  }
  if (out.empty())
    out = {"min", "max", "avg", "sum"};
  return out;
}

json metric_list(const metric_set& all, const std::optional<std::string>& get) {
  auto out = json::array();
  if (!get) {
    for (auto& [name, value] : all)
      out.push_back({{"id", name}});
    return out;
  }
  for (auto& wanted : split(*get))
    for (auto& [name, value] : all)
      if (name == wanted)
        out.push_back({{"id", name}, {"value", value_text(value)}});
  return out;
}

json aggregated_metrics(const std::vector<metric_set>& sets,
                        const std::optional<std::string>& get,
                        const std::vector<std::string>& aggregations) {
  std::set<std::string> names;
  for (auto& set : sets)
    for (auto& [name, value] : set)
      names.insert(name);
  auto out = json::array();
  if (!get) {
    for (auto& name : names)
      out.push_back({{"id", name}});
    return out;
  }
  for (auto& wanted : split(*get)) {
    if (!names.count(wanted))
      continue;
    double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0;
    int n = 0;
    for (auto& set : sets)
      for (auto& [name, value] : set)
        if (name == wanted) {
          lo = std::min(lo, value);
          hi = std::max(hi, value);
          sum += value;
          ++n;
        }
    json m{{"id", wanted}};
    for (auto& a : aggregations)
      m[a] = a == "min" ? lo : a == "max" ? hi : a == "sum" ? sum : sum / n;
    out.push_back(std::move(m));
  }
  return out;
}

metric_set job_metrics(const job_status& s, int64_t now_ms) {
  metric_set out;
  append(out, "", job_metric_values(s, now_ms));
  return out;
}

metric_set cluster_metrics(const cluster_overview& c,
                           const std::vector<job_status>& jobs) {
  metric_set out;
  append(out, "", cluster_metric_values(c, jobs));
  return out;
}

metric_set task_manager_metrics(const task_manager_info& tm) {
  metric_set out;
  append(out, "", task_manager_metric_values(tm));
  return out;
}

std::vector<std::pair<int32_t, metric_set>>
subtask_metrics(const job_status& s, const std::string& vertex) {
  std::vector<std::pair<int32_t, metric_set>> out;
  for (auto& t : s.subtasks) {
    if (!chain_holds(t.task, vertex))
      continue;
    metric_set m;
    append(m, "", subtask_metric_values(t.metrics));
    // The vertex's own operator metrics, scoped by its name as Flink's
    // operator metrics are.
    for (auto& v : t.metrics.vertices)
      if (v.vertex == vertex)
        append(m, vertex + ".", operator_metric_values(v));
    out.emplace_back(t.subtask, std::move(m));
  }
  return out;
}

metric_set vertex_metrics_of(const job_status& s, const std::string& vertex) {
  metric_set out;
  for (auto& [index, m] : subtask_metrics(s, vertex))
    for (auto& [name, value] : m)
      out.emplace_back(std::to_string(index) + "." + name, value);
  return out;
}

} // namespace weir::rest
