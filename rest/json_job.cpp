// The JSON bodies of one job's REST views (/jobs/{jobid}/...): Flink's v1
// field names over the Dispatcher's job_status and job_graph.
#include "rest/json.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "config/config.hpp"

namespace weir::rest {

namespace {

using nlohmann::json;

/// The vertices of chain "a -> b -> c", in order.
std::vector<std::string> chain_parts(const std::string& chain) {
  static const std::string sep = " -> ";
  std::vector<std::string> parts;
  size_t from = 0;
  for (;;) {
    auto to = chain.find(sep, from);
    parts.push_back(
      chain.substr(from, to == std::string::npos ? to : to - from));
    if (to == std::string::npos)
      return parts;
    from = to + sep.size();
  }
}

bool chain_holds(const std::string& chain, const std::string& id) {
  auto parts = chain_parts(chain);
  return std::find(parts.begin(), parts.end(), id) != parts.end();
}

/// One state for a vertex's subtasks, as Flink aggregates them
/// (ExecutionJobVertex#getAggregateExecutionState).
execution_state aggregate(const std::map<execution_state, int>& counts,
                          int parallelism) {
  auto has = [&](execution_state x) { return counts.count(x) > 0; };
  for (auto x : {execution_state::failed, execution_state::canceling,
                 execution_state::canceled, execution_state::initializing,
                 execution_state::running})
    if (has(x))
      return x;
  if (has(execution_state::finished))
    return counts.at(execution_state::finished) == parallelism
             ? execution_state::finished
             : execution_state::running;
  return execution_state::created; // scheduled and deploying too, as Flink
}

/// A vertex of a job that ended: every subtask ended as the job did.
execution_state ended_vertex_state(job_state s) {
  switch (s) {
    case job_state::finished:
      return execution_state::finished;
    case job_state::canceled:
      return execution_state::canceled;
    default:
      return execution_state::failed;
  }
}

const vertex_spec* find_vertex(const job_graph& g, const std::string& id) {
  for (auto& v : g.vertices)
    if (v.id == id)
      return &v;
  return nullptr;
}

const vertex_metrics* find_metrics(const io_metrics& m, const std::string& id) {
  for (auto& v : m.vertices)
    if (v.vertex == id)
      return &v;
  return nullptr;
}

/// Flink's ship strategies.
std::string ship_strategy(partitioning p) {
  switch (p) {
    case partitioning::forward: return "FORWARD";
    case partitioning::hash: return "HASH";
    case partitioning::rebalance: return "REBALANCE";
    case partitioning::broadcast: return "BROADCAST";
  }
  return "UNKNOWN";
}

/// The vertex ids of a job: the graph's, else (only a result is left) the
/// metrics'.
std::vector<std::string> vertex_ids(const job_status& s, const job_graph& g) {
  std::vector<std::string> ids;
  if (!g.vertices.empty())
    for (auto& v : g.vertices)
      ids.push_back(v.id);
  else
    for (auto& m : s.metrics.vertices)
      ids.push_back(m.vertex);
  return ids;
}

/// Bytes a vertex read (as the head of its chain) and wrote (as its tail),
/// summed over its subtasks' last reports.
std::pair<int64_t, int64_t> vertex_bytes(const job_status& s,
                                         const std::string& id) {
  int64_t in = 0, out = 0;
  for (auto& t : s.subtasks) {
    auto parts = chain_parts(t.task);
    if (parts.front() == id)
      in += t.metrics.load.bytes_in;
    if (parts.back() == id)
      out += t.metrics.load.bytes_out;
  }
  return {in, out};
}

json subtask_metrics(const subtask_status& t, const std::string& vertex) {
  auto* m = find_metrics(t.metrics, vertex);
  auto parts = chain_parts(t.task);
  auto out = json{
    {"read-records", m ? m->records_in : 0},
    {"write-records", m ? m->records_out : 0},
    {"read-bytes", parts.front() == vertex ? t.metrics.load.bytes_in : 0},
    {"write-bytes", parts.back() == vertex ? t.metrics.load.bytes_out : 0}};
  if (m && m->records_combined > 0)
    out["weir-records-combined"] = m->records_combined;
  return out;
}

/// Flink's backpressure levels: up to 10% of the time backpressured is OK,
/// up to 50% LOW, more HIGH.
std::string backpressure_level(double ratio) {
  return ratio <= 0.10 ? "ok" : ratio <= 0.5 ? "low" : "high";
}

json checkpoint_entry_json(const checkpoint_entry& c) {
  return json{{"id", c.id},
              {"status", c.status},
              {"is_savepoint", c.savepoint},
              {"trigger_timestamp", c.trigger_time_ms},
              {"latest_ack_timestamp", c.latest_ack_time_ms},
              {"state_size", c.state_size},
              {"checkpointed_size", c.state_size},
              {"end_to_end_duration", c.duration_ms},
              {"alignment_buffered", 0},
              {"num_subtasks", c.subtasks},
              {"num_acknowledged_subtasks", c.acknowledged},
              {"failure_message", c.failure}};
}

} // namespace

json plan(const job_status& s, const job_graph& g) {
  auto nodes = json::array();
  for (auto& id : vertex_ids(s, g)) {
    auto* v = find_vertex(g, id);
    json node{{"id", id},
              {"parallelism", v ? v->parallelism : 0},
              {"operator", v ? v->op : ""},
              {"operator_strategy", ""},
              {"description", v ? fmt::format("{} ({})", id, v->op) : id},
              {"optimizer_properties", json::object()}};
    auto inputs = json::array();
    for (auto& e : g.edges)
      if (e.to == id)
        inputs.push_back({{"num", inputs.size()},
                          {"id", e.from},
                          {"ship_strategy", ship_strategy(e.part)},
                          {"exchange", "pipelined_bounded"}});
    if (!inputs.empty())
      node["inputs"] = inputs;
    nodes.push_back(std::move(node));
  }
  return json{{"jid", s.id.to_string()},
              {"name", s.name},
              {"type", "STREAMING"},
              {"nodes", nodes}};
}

json job_details(const job_status& s, const job_graph& g, int64_t now_ms) {
  auto vertices = json::array();
  bool ended = is_globally_terminal(s.state);
  for (auto& id : vertex_ids(s, g)) {
    auto* spec = find_vertex(g, id);
    auto* m = find_metrics(s.metrics, id);
    std::map<execution_state, int> counts;
    int64_t start = -1, end = -1;
    for (auto& t : s.subtasks)
      if (chain_holds(t.task, id)) {
        ++counts[t.state];
        if (t.start_time_ms > 0 && (start < 0 || t.start_time_ms < start))
          start = t.start_time_ms;
        end = std::max(end, t.end_time_ms > 0 ? t.end_time_ms : end);
      }
    int parallelism = spec ? spec->parallelism : 0;
    auto state = ended ? ended_vertex_state(s.state)
                       : aggregate(counts, parallelism);
    auto [bytes_in, bytes_out] = vertex_bytes(s, id);
    json tasks = json::object();
    for (auto& [x, n] : counts)
      tasks[to_string(x)] = n;
    vertices.push_back(
      {{"id", id},
       {"name", id},
       {"parallelism", parallelism},
       {"status", to_string(state)},
       {"start-time", start},
       {"end-time", ended ? s.end_time_ms : -1},
       {"duration", start < 0 ? -1 : (ended ? s.end_time_ms : now_ms) - start},
       {"tasks", tasks},
       {"metrics",
        {{"read-records", m ? m->records_in : 0},
         {"write-records", m ? m->records_out : 0},
         {"read-bytes", bytes_in},
         {"write-bytes", bytes_out}}}});
    if (m && m->records_combined > 0)
      vertices.back()["metrics"]["weir-records-combined"] = m->records_combined;
  }
  return json{{"jid", s.id.to_string()},
              {"name", s.name},
              {"isStoppable", false},
              {"state", to_string(s.state)},
              {"start-time", s.start_time_ms},
              {"end-time", end_time(s)},
              {"duration", duration(s, now_ms)},
              {"now", now_ms},
              {"restarts", s.restarts},
              {"vertices", vertices},
              {"plan", plan(s, g)}};
}

std::optional<json> vertex_details(const job_status& s, const job_graph& g,
                                   const std::string& id, int64_t now_ms) {
  auto ids = vertex_ids(s, g);
  if (std::find(ids.begin(), ids.end(), id) == ids.end())
    return std::nullopt;
  auto* spec = find_vertex(g, id);
  auto subtasks = json::array();
  for (auto& t : s.subtasks) {
    if (!chain_holds(t.task, id))
      continue;
    auto end = t.end_time_ms > 0 ? t.end_time_ms : now_ms;
    subtasks.push_back(
      {{"subtask", t.subtask},
       {"status", to_string(t.state)},
       {"attempt", t.attempt},
       {"host", t.location},
       {"taskmanager-id", t.location},
       {"start-time", t.start_time_ms > 0 ? t.start_time_ms : -1},
       {"end-time", t.end_time_ms > 0 ? t.end_time_ms : -1},
       {"duration", t.start_time_ms > 0 ? end - t.start_time_ms : -1},
       {"metrics", subtask_metrics(t, id)}});
  }
  return json{{"id", id},
              {"name", id},
              {"parallelism", spec ? spec->parallelism : 0},
              {"now", now_ms},
              {"subtasks", subtasks}};
}

std::optional<json> backpressure(const job_status& s, const job_graph& g,
                                 const std::string& id, int64_t now_ms) {
  auto ids = vertex_ids(s, g);
  if (std::find(ids.begin(), ids.end(), id) == ids.end())
    return std::nullopt;
  auto subtasks = json::array();
  double worst = 0;
  for (auto& t : s.subtasks) {
    if (!chain_holds(t.task, id))
      continue;
    auto& load = t.metrics.load;
    double ratio = std::clamp(load.backpressured_ms_per_s / 1000.0, 0.0, 1.0);
    worst = std::max(worst, ratio);
    subtasks.push_back(
      {{"subtask", t.subtask},
       {"attempt-number", t.attempt},
       {"backpressure-level", backpressure_level(ratio)},
       {"ratio", ratio},
       {"busyRatio", std::clamp(load.busy_ms_per_s / 1000.0, 0.0, 1.0)},
       {"idleRatio", std::clamp(load.idle_ms_per_s / 1000.0, 0.0, 1.0)}});
  }
  return json{{"status", "ok"},
              {"backpressure-level", backpressure_level(worst)},
              {"end-timestamp", now_ms},
              {"subtasks", subtasks}};
}

std::optional<json> vertex_watermarks(const job_status& s, const job_graph& g,
                                      const std::string& id) {
  auto ids = vertex_ids(s, g);
  if (std::find(ids.begin(), ids.end(), id) == ids.end())
    return std::nullopt;
  auto out = json::array();
  for (auto& t : s.subtasks)
    if (chain_holds(t.task, id))
      out.push_back(
        {{"id", std::to_string(t.subtask) + ".currentInputWatermark"},
         {"value", std::to_string(t.metrics.load.input_watermark)}});
  return out;
}

json checkpoints(const checkpoint_stats& c) {
  auto history = json::array();
  json latest_completed = nullptr, latest_savepoint = nullptr,
       latest_failed = nullptr;
  for (auto& e : c.history) { // newest first
    history.push_back(checkpoint_entry_json(e));
    if (e.status == "COMPLETED" && !e.savepoint && latest_completed.is_null())
      latest_completed = checkpoint_entry_json(e);
    if (e.status == "COMPLETED" && e.savepoint && latest_savepoint.is_null())
      latest_savepoint = checkpoint_entry_json(e);
    if (e.status == "FAILED" && latest_failed.is_null())
      latest_failed = checkpoint_entry_json(e);
  }
  json restored = nullptr;
  if (c.restored_id > 0)
    restored = {{"id", c.restored_id},
                {"restore_timestamp", c.restore_time_ms},
                {"is_savepoint", false}};
  return json{{"counts",
               {{"restored", c.restored},
                {"total", c.total},
                {"in_progress", c.in_progress},
                {"completed", c.completed},
                {"failed", c.failed}}},
              {"latest",
               {{"completed", latest_completed},
                {"savepoint", latest_savepoint},
                {"failed", latest_failed},
                {"restored", restored}}},
              {"history", history}};
}

json exceptions(const job_status& s) {
  auto entries = json::array();
  // Newest first, as Flink lists them.
  for (auto i = s.exceptions.rbegin(); i != s.exceptions.rend(); ++i)
    entries.push_back({{"exceptionName", "weir.JobFailure"},
                       {"stacktrace", i->exception},
                       {"timestamp", i->time_ms},
                       {"taskName", i->task.empty() ? json(nullptr)
                                                    : json(i->task)},
                       {"location", i->location.empty()
                                      ? json(nullptr)
                                      : json(i->location)},
                       {"taskManagerId", i->location.empty()
                                           ? json(nullptr)
                                           : json(i->location)}});
  json root = nullptr, time = nullptr;
  if (!s.exceptions.empty()) {
    root = s.exceptions.back().exception;
    time = s.exceptions.back().time_ms;
  } else if (!s.error.empty()) {
    root = s.error;
    time = s.end_time_ms;
  }
  return json{{"root-exception", root},
              {"timestamp", time},
              {"all-exceptions", json::array()},
              {"truncated", false},
              {"exceptionHistory", {{"entries", entries}, {"truncated", false}}}};
}

json job_config(const job_status& s, const job_graph& g,
                const configuration& cluster) {
  int32_t parallelism = 0;
  for (auto& v : g.vertices)
    parallelism = std::max(parallelism, v.parallelism);
  json user = json::object();
  for (auto& [k, v] : g.config)
    user[k] = v;
  json effective = json::array();
  std::string restart_strategy;
  for (auto& e : effective_job_config(cluster, g.config, g.config_origins)) {
    if (e.key == "restart-strategy.type")
      restart_strategy = e.value;
    effective.push_back(
      {{"key", e.key}, {"value", e.value}, {"origin", e.origin}});
  }
  return json{{"jid", s.id.to_string()},
              {"name", s.name},
              {"execution-config",
               {{"execution-mode", "PIPELINED"},
                {"restart-strategy", restart_strategy},
                {"job-parallelism", parallelism},
                {"object-reuse-mode", false},
                {"user-config", user}}},
              {"weir-effective-config", effective}};
}

json execution_result(const job_status& s, int64_t now_ms) {
  if (!is_globally_terminal(s.state))
    return json{{"status", {{"id", "IN_PROGRESS"}}}};
  auto status = s.state == job_state::finished   ? "SUCCEEDED"
                : s.state == job_state::canceled ? "CANCELED"
                                                 : "FAILED";
  json accumulators = json::object();
  for (auto& v : s.metrics.vertices)
    for (auto& [name, value] : v.counters)
      accumulators[v.vertex + "." + name] = value;
  json result{{"id", s.id.to_string()},
              {"application-status", status},
              {"accumulator-results", accumulators},
              {"net-runtime", duration(s, now_ms)}};
  if (!s.error.empty())
    result["failure-cause"] = {{"class", "weir.JobFailure"},
                               {"stack-trace", s.error}};
  return json{{"status", {{"id", "COMPLETED"}}},
              {"job-execution-result", result}};
}

} // namespace weir::rest
