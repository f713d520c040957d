// The JSON bodies of one job's REST views (/jobs/{jobid}/...): Flink's v1
// field names over the Dispatcher's job_status and job_graph.
#include "rest/json.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "config/config.hpp"
#include "config/keys.hpp"
#include "messages/base64.hpp"
#include "messages/flink_ids.hpp"
#include "messages/key_groups.hpp"

namespace weir::rest {

namespace {

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

} // namespace

bool chain_holds(const std::string& chain, const std::string& id) {
  auto parts = chain_parts(chain);
  return std::find(parts.begin(), parts.end(), id) != parts.end();
}

void with_running_parallelism(const job_status& s, job_graph& g) {
  for (auto& v : g.vertices)
    for (auto& t : s.subtasks)
      if (chain_holds(t.task, v.id)) {
        v.parallelism = t.parallelism;
        break;
      }
}

namespace {

using nlohmann::json;

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

/// Flink's backpressure levels: up to 10% of the time backpressured is OK,
/// up to 50% LOW, more HIGH.
std::string backpressure_level(double ratio) {
  return ratio <= 0.10 ? "ok" : ratio <= 0.5 ? "low" : "high";
}

/// Flink's @JsonTypeInfo names of CheckpointStatistics' subclasses.
const char* checkpoint_class(const checkpoint_entry& c) {
  return c.status == "COMPLETED" ? "completed"
         : c.status == "FAILED"  ? "failed"
                                 : "in_progress";
}

/// One checkpoint as Flink's CheckpointStatistics (its `tasks` empty, as
/// Flink's overview sends them; /checkpoints/details has them).
json checkpoint_entry_json(const checkpoint_entry& c) {
  json out{{"clazz", checkpoint_class(c)},
           {"id", c.id},
           {"status", c.status},
           {"is_savepoint", c.savepoint},
           {"checkpoint_type", !c.savepoint ? "CHECKPOINT"
                               : c.stop     ? "SYNC_SAVEPOINT"
                                            : "SAVEPOINT"},
           {"trigger_timestamp", c.trigger_time_ms},
           {"latest_ack_timestamp", c.latest_ack_time_ms},
           {"state_size", c.state_size},
           {"checkpointed_size", c.state_size},
           {"end_to_end_duration", c.duration_ms},
           {"alignment_buffered", 0},
           {"processed_data", 0},
           {"persisted_data", 0},
           {"num_subtasks", c.subtasks},
           {"num_acknowledged_subtasks", c.acknowledged},
           {"tasks", json::object()}};
  if (c.status == "COMPLETED") {
    out["external_path"] = c.external_path.empty()
                             ? std::string{"<checkpoint-not-externally-addressable>"}
                             : "file:" + c.external_path;
    out["discarded"] = c.discarded;
  }
  if (c.status == "FAILED") {
    out["failure_timestamp"] = c.trigger_time_ms + c.duration_ms;
    out["failure_message"] = c.failure;
  }
  return out;
}

json summary_json(const stats_summary& s) {
  return json{{"min", s.min}, {"max", s.max}, {"avg", s.avg},
              {"p50", s.p50}, {"p90", s.p90}, {"p95", s.p95},
              {"p99", s.p99}, {"p999", s.p999}};
}

/// Flink's ExecutionState names, each with the subtasks in it.
json state_counts(const std::map<execution_state, int>& counts) {
  json out = json::object();
  for (auto x : {execution_state::created, execution_state::scheduled,
                 execution_state::deploying, execution_state::running,
                 execution_state::finished, execution_state::canceling,
                 execution_state::canceled, execution_state::failed,
                 execution_state::initializing})
    out[to_string(x)] = counts.count(x) ? counts.at(x) : 0;
  out["RECONCILING"] = 0; // weir never reconciles subtasks
  return out;
}

} // namespace

/// The vertex of `s` that `text` names: its 32-hex id, or its name (a
/// weir extension).
std::optional<std::string> resolve_vertex(const job_status& s,
                                          const job_graph& g,
                                          const std::string& text) {
  for (auto& id : vertex_ids(s, g))
    if (text == id || text == flink_vertex_id(s.id, id))
      return id;
  return std::nullopt;
}

json plan(const job_status& s, const job_graph& g) {
  auto nodes = json::array();
  for (auto& id : vertex_ids(s, g)) {
    auto* v = find_vertex(g, id);
    json node{{"id", flink_vertex_id(s.id, id)},
              {"parallelism", v ? v->parallelism : 0},
              {"operator", v ? v->op : ""},
              {"operator_strategy", ""},
              {"description", v ? fmt::format("{} ({})", id, v->op) : id},
              {"optimizer_properties", json::object()}};
    auto inputs = json::array();
    for (auto& e : g.edges)
      if (e.to == id)
        inputs.push_back({{"num", inputs.size()},
                          {"id", flink_vertex_id(s.id, e.from)},
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

namespace {

/// Flink's IOMetricsInfo: every count is complete (each subtask reported).
json io_metrics_json(int64_t read_records, int64_t write_records,
                     int64_t read_bytes, int64_t write_bytes,
                     int64_t combined) {
  json out{{"read-records", read_records},
           {"read-records-complete", true},
           {"write-records", write_records},
           {"write-records-complete", true},
           {"read-bytes", read_bytes},
           {"read-bytes-complete", true},
           {"write-bytes", write_bytes},
           {"write-bytes-complete", true}};
  if (combined > 0)
    out["weir-records-combined"] = combined;
  return out;
}

json subtask_io(const subtask_status& t, const std::string& vertex) {
  auto* m = find_metrics(t.metrics, vertex);
  auto parts = chain_parts(t.task);
  return io_metrics_json(
    m ? m->records_in : 0, m ? m->records_out : 0,
    parts.front() == vertex ? t.metrics.load.bytes_in : 0,
    parts.back() == vertex ? t.metrics.load.bytes_out : 0,
    m ? m->records_combined : 0);
}

/// Flink's JobStatus names with the time the job reached each (0: not
/// reached, or not timed apart: weir times its start and its end).
json job_timestamps(const job_status& s) {
  json out = json::object();
  for (auto name : {"INITIALIZING", "CREATED", "RUNNING", "FAILING", "FAILED",
                    "CANCELLING", "CANCELED", "FINISHED", "RESTARTING",
                    "SUSPENDED", "RECONCILING"})
    out[name] = 0;
  out["INITIALIZING"] = s.start_time_ms;
  out["CREATED"] = s.start_time_ms;
  if (s.state != job_state::created)
    out["RUNNING"] = s.start_time_ms;
  if (is_globally_terminal(s.state))
    out[to_string(s.state)] = s.end_time_ms;
  return out;
}

/// Vertex `id`'s key groups: as its JobMaster reports them while the job
/// runs; for an ended job (its subtasks are no longer listed) the job's
/// pipeline.max-parallelism, else Flink's default rule.
int32_t vertex_max_parallelism(const job_status& s, const job_graph& g,
                               const std::string& id, int32_t parallelism) {
  for (auto& t : s.subtasks)
    if (chain_holds(t.task, id) && t.max_parallelism > 0)
      return t.max_parallelism;
  if (auto i = g.config.find("pipeline.max-parallelism"); i != g.config.end())
    try {
      return std::stoi(i->second);
    } catch (const std::exception&) {
      // refused when the job was submitted; the rule below otherwise
    }
  return default_max_parallelism(std::max(parallelism, 1));
}

} // namespace

json job_details(const job_status& s, const job_graph& g, int64_t now_ms) {
  auto vertices = json::array();
  bool ended = is_globally_terminal(s.state);
  std::map<execution_state, int> vertex_states;
  int32_t max_parallelism = 0;
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
    auto vertex_max = vertex_max_parallelism(s, g, id, parallelism);
    max_parallelism = std::max(max_parallelism, vertex_max);
    auto state = ended ? ended_vertex_state(s.state)
                       : aggregate(counts, parallelism);
    if (ended) // its subtasks ended as the job did
      counts = {{state, parallelism}};
    ++vertex_states[state];
    auto [bytes_in, bytes_out] = vertex_bytes(s, id);
    vertices.push_back(
      {{"id", flink_vertex_id(s.id, id)},
       {"name", id},
       {"maxParallelism", vertex_max},
       {"parallelism", parallelism},
       {"status", to_string(state)},
       {"start-time", start},
       {"end-time", ended ? s.end_time_ms : -1},
       {"duration", start < 0 ? -1 : (ended ? s.end_time_ms : now_ms) - start},
       {"tasks", state_counts(counts)},
       {"metrics", io_metrics_json(m ? m->records_in : 0,
                                   m ? m->records_out : 0, bytes_in,
                                   bytes_out, m ? m->records_combined : 0)}});
  }
  return json{{"jid", s.id.to_string()},
              {"name", s.name},
              {"isStoppable", false},
              {"state", to_string(s.state)},
              {"start-time", s.start_time_ms},
              {"end-time", end_time(s)},
              {"duration", duration(s, now_ms)},
              {"maxParallelism", max_parallelism},
              {"now", now_ms},
              {"timestamps", job_timestamps(s)},
              {"restarts", s.restarts},
              {"vertices", vertices},
              {"status-counts", state_counts(vertex_states)},
              {"plan", plan(s, g)}};
}

namespace {

/// One subtask of `vertex` as Flink's SubtaskExecutionAttemptDetailsInfo.
json subtask_json(const subtask_status& t, const std::string& vertex,
                  int64_t now_ms) {
  auto end = t.end_time_ms > 0 ? t.end_time_ms : now_ms;
  auto start = t.start_time_ms > 0 ? t.start_time_ms : -1;
  return json{{"subtask", t.subtask},
              {"status", to_string(t.state)},
              {"attempt", t.attempt},
              {"host", t.location},
              {"taskmanager-id", t.location.empty()
                                   ? std::string{"(unassigned)"}
                                   : flink_resource_id(resource_id{t.location})},
              {"start-time", start},
              {"start_time", start}, // Flink sends both spellings
              {"end-time", t.end_time_ms > 0 ? t.end_time_ms : -1},
              {"duration", t.start_time_ms > 0 ? end - t.start_time_ms : -1},
              {"metrics", subtask_io(t, vertex)}};
}

/// Flink's user accumulators of a vertex: its counters, named as in the
/// execution result ("vertex.name").
json user_accumulators(const io_metrics& m, const std::string& vertex) {
  auto out = json::array();
  if (auto* v = find_metrics(m, vertex))
    for (auto& [name, value] : v->counters)
      out.push_back({{"name", vertex + "." + name},
                     {"type", "LongCounter"},
                     {"value", std::to_string(value)}});
  return out;
}

} // namespace

std::optional<json> vertex_details(const job_status& s, const job_graph& g,
                                   const std::string& text, int64_t now_ms) {
  auto id = resolve_vertex(s, g, text);
  if (!id)
    return std::nullopt;
  auto* spec = find_vertex(g, *id);
  auto subtasks = json::array();
  for (auto& t : s.subtasks)
    if (chain_holds(t.task, *id))
      subtasks.push_back(subtask_json(t, *id, now_ms));
  int parallelism = spec ? spec->parallelism : 0;
  return json{{"id", flink_vertex_id(s.id, *id)},
              {"name", *id},
              {"parallelism", parallelism},
              {"maxParallelism",
               vertex_max_parallelism(s, g, *id, parallelism)},
              {"now", now_ms},
              {"subtasks", subtasks}};
}

std::optional<json> subtask_details(const job_status& s, const std::string& vertex,
                                    int32_t index, std::optional<int32_t> attempt,
                                    int64_t now_ms) {
  for (auto& t : s.subtasks)
    if (chain_holds(t.task, vertex) && t.subtask == index
        && (!attempt || *attempt == t.attempt))
      return subtask_json(t, vertex, now_ms);
  return std::nullopt;
}

json subtask_times(const job_status& s, const std::string& vertex,
                   int64_t now_ms) {
  auto subtasks = json::array();
  for (auto& t : s.subtasks) {
    if (!chain_holds(t.task, vertex))
      continue;
    // weir times a subtask's deployment and its end, not the changes
    // between: the deployment stands for the states up to its current one.
    json times = json::object();
    for (auto x : {execution_state::created, execution_state::scheduled,
                   execution_state::deploying, execution_state::initializing,
                   execution_state::running, execution_state::finished,
                   execution_state::canceling, execution_state::canceled,
                   execution_state::failed})
      times[to_string(x)] = 0;
    times["RECONCILING"] = 0;
    if (t.start_time_ms > 0)
      for (auto x : {execution_state::created, execution_state::scheduled,
                     execution_state::deploying, execution_state::initializing,
                     execution_state::running})
        if (static_cast<int>(x) <= static_cast<int>(t.state))
          times[to_string(x)] = t.start_time_ms;
    if (t.end_time_ms > 0)
      times[to_string(t.state)] = t.end_time_ms;
    auto end = t.end_time_ms > 0 ? t.end_time_ms : now_ms;
    subtasks.push_back(
      {{"subtask", t.subtask},
       {"host", t.location},
       {"duration", t.start_time_ms > 0 ? end - t.start_time_ms : -1},
       {"timestamps", times}});
  }
  return json{{"id", flink_vertex_id(s.id, vertex)},
              {"name", vertex},
              {"now", now_ms},
              {"subtasks", subtasks}};
}

json vertex_task_managers(const job_status& s, const std::string& vertex,
                          int64_t now_ms) {
  // The vertex's subtasks by TaskExecutor, in order of first appearance.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const subtask_status*>> by_tm;
  for (auto& t : s.subtasks)
    if (chain_holds(t.task, vertex) && !t.location.empty()) {
      if (!by_tm.count(t.location))
        order.push_back(t.location);
      by_tm[t.location].push_back(&t);
    }
  auto tms = json::array();
  for (auto& tm : order) {
    std::map<execution_state, int> counts;
    int64_t start = -1, end = -1, in = 0, out = 0, bytes_in = 0, bytes_out = 0;
    bool all_ended = true;
    for (auto* t : by_tm[tm]) {
      ++counts[t->state];
      if (t->start_time_ms > 0 && (start < 0 || t->start_time_ms < start))
        start = t->start_time_ms;
      all_ended = all_ended && t->end_time_ms > 0;
      end = std::max(end, t->end_time_ms);
      auto m = subtask_io(*t, vertex);
      in += m["read-records"].get<int64_t>();
      out += m["write-records"].get<int64_t>();
      bytes_in += m["read-bytes"].get<int64_t>();
      bytes_out += m["write-bytes"].get<int64_t>();
    }
    auto state = aggregate(counts, static_cast<int>(by_tm[tm].size()));
    tms.push_back(
      {{"endpoint", tm},
       {"taskmanager-id", flink_resource_id(resource_id{tm})},
       {"status", to_string(state)},
       {"start-time", start},
       {"end-time", all_ended ? end : -1},
       {"duration", start < 0 ? -1 : (all_ended ? end : now_ms) - start},
       {"metrics", io_metrics_json(in, out, bytes_in, bytes_out, 0)},
       {"status-counts", state_counts(counts)}});
  }
  return json{{"id", flink_vertex_id(s.id, vertex)},
              {"name", vertex},
              {"now", now_ms},
              {"taskmanagers", tms}};
}

json job_accumulators(const job_status& s) {
  auto user = json::array();
  for (auto& v : s.metrics.vertices)
    for (auto& a : user_accumulators(s.metrics, v.vertex))
      user.push_back(a);
  return json{{"job-accumulators", json::array()},
              {"user-task-accumulators", user},
              {"serialized-user-task-accumulators", json::object()}};
}

json vertex_accumulators(const job_status& s, const std::string& vertex) {
  return json{{"id", flink_vertex_id(s.id, vertex)},
              {"user-accumulators", user_accumulators(s.metrics, vertex)}};
}

json subtask_accumulators(const job_status& s, const job_graph& g,
                          const std::string& vertex) {
  auto* spec = find_vertex(g, vertex);
  auto subtasks = json::array();
  for (auto& t : s.subtasks)
    if (chain_holds(t.task, vertex))
      subtasks.push_back(
        {{"subtask", t.subtask},
         {"attempt", t.attempt},
         {"host", t.location},
         {"user-accumulators", user_accumulators(t.metrics, vertex)}});
  return json{{"id", flink_vertex_id(s.id, vertex)},
              {"parallelism", spec ? spec->parallelism : 0},
              {"subtasks", subtasks}};
}

std::optional<json> attempt_accumulators(const job_status& s,
                                         const std::string& vertex,
                                         int32_t index, int32_t attempt) {
  for (auto& t : s.subtasks)
    if (chain_holds(t.task, vertex) && t.subtask == index
        && t.attempt == attempt)
      return json{{"subtask", t.subtask},
                  {"attempt", t.attempt},
                  {"id", flink_vertex_id(s.id, vertex)},
                  {"user-accumulators", user_accumulators(t.metrics, vertex)}};
  return std::nullopt;
}

namespace {

/// Checkpoint `id` among the history and the latest ones.
const checkpoint_entry* find_checkpoint(const checkpoint_stats& c, int64_t id) {
  for (auto* e : {&c.latest_completed, &c.latest_savepoint, &c.latest_failed})
    if (e->id == id)
      return e;
  for (auto& e : c.history)
    if (e.id == id)
      return &e;
  return nullptr;
}

/// The acknowledgements of `e` by subtasks of `vertex` (of its chain: a
/// chain's figures count for each of its vertices).
std::vector<const subtask_ack*> acks_of(const checkpoint_entry& e,
                                        const std::string& vertex) {
  std::vector<const subtask_ack*> out;
  for (auto& a : e.acks)
    if (chain_holds(a.task, vertex))
      out.push_back(&a);
  return out;
}

/// Flink's TaskCheckpointStatistics of `vertex` in checkpoint `e`.
json task_checkpoint_json(const checkpoint_entry& e, const std::string& vertex,
                          int32_t parallelism) {
  int64_t latest = 0, size = 0;
  auto acks = acks_of(e, vertex);
  for (auto* a : acks) {
    latest = std::max(latest, a->ack_time_ms);
    size += a->state_size;
  }
  return json{{"id", e.id},
              {"status", e.status},
              {"latest_ack_timestamp", latest},
              {"state_size", size},
              {"end_to_end_duration", latest > 0 ? latest - e.trigger_time_ms : 0},
              {"alignment_buffered", 0},
              {"processed_data", 0},
              {"persisted_data", 0},
              {"num_subtasks", parallelism},
              {"num_acknowledged_subtasks", static_cast<int32_t>(acks.size())}};
}

} // namespace

std::optional<json> checkpoint_details(const job_status& s, const job_graph& g,
                                       int64_t id) {
  auto* e = find_checkpoint(s.checkpoints, id);
  if (e == nullptr)
    return std::nullopt;
  auto out = checkpoint_entry_json(*e);
  // Each vertex's share, as Flink's details list each task's.
  for (auto& v : g.vertices)
    out["tasks"][flink_vertex_id(s.id, v.id)]
      = task_checkpoint_json(*e, v.id, v.parallelism);
  return out;
}

std::optional<json> checkpoint_subtasks(const job_status& s, const job_graph& g,
                                        int64_t id, const std::string& vertex) {
  auto* e = find_checkpoint(s.checkpoints, id);
  auto* spec = find_vertex(g, vertex);
  if (e == nullptr || spec == nullptr)
    return std::nullopt;
  auto out = task_checkpoint_json(*e, vertex, spec->parallelism);
  auto acks = acks_of(*e, vertex);
  std::vector<int64_t> sizes, durations;
  int64_t alignment = 0;
  auto subtasks = json::array();
  for (int32_t i = 0; i < spec->parallelism; ++i) {
    auto a = std::find_if(acks.begin(), acks.end(),
                          [&](auto* x) { return x->subtask == i; });
    if (a == acks.end()) {
      subtasks.push_back({{"index", i},
                          {"status", "pending_or_failed"},
                          {"clazz", "pending_or_failed"}});
      continue;
    }
    auto& ack = **a;
    sizes.push_back(ack.state_size);
    durations.push_back(ack.ack_time_ms - e->trigger_time_ms);
    alignment = std::max(alignment, ack.alignment_ms);
    subtasks.push_back(
      {{"index", i},
       {"status", "completed"},
       {"clazz", "completed"},
       {"ack_timestamp", ack.ack_time_ms},
       {"end_to_end_duration", ack.ack_time_ms - e->trigger_time_ms},
       {"state_size", ack.state_size},
       {"alignment",
        {{"buffered", 0}, {"processed", 0}, {"persisted", 0},
         {"duration", ack.alignment_ms}}},
       {"unaligned_checkpoint", false},
       {"aborted", false}});
  }
  out["summary"] = {{"state_size", summary_json(summarize(sizes))},
                    {"end_to_end_duration", summary_json(summarize(durations))},
                    {"alignment",
                     {{"buffered", 0}, {"processed", 0}, {"persisted", 0},
                      {"duration", alignment}}}};
  out["subtasks"] = subtasks;
  return out;
}

std::optional<json> checkpoint_config(const job_graph& g,
                                      const configuration& cluster) {
  // The job's keys over the cluster's, read as the JobMaster reads them.
  auto cfg = std::make_optional(cluster);
  if (cfg->apply(g.config, "job"))
    return std::nullopt;
  auto interval = cfg->get(keys::checkpoint_interval).count();
  if (interval <= 0)
    return std::nullopt; // as Flink: checkpointing is not enabled
  return json{{"mode", "EXACTLY_ONCE"}, // aligned barriers
              {"interval", interval},
              {"timeout", cfg->get(keys::checkpoint_timeout).count()},
              {"min_pause", cfg->get(keys::checkpoint_min_pause).count()},
              {"max_concurrent", cfg->get(keys::max_concurrent_checkpoints)},
              // Completed checkpoints stay in the state directory (the
              // newest state.checkpoints.num-retained) when the job is
              // cancelled, until a later run of it.
              {"externalization",
               {{"enabled", true}, {"delete_on_cancellation", false}}},
              {"state_backend", cfg->get(keys::state_backend)},
              {"checkpoint_storage", "FileSystemCheckpointStorage"},
              {"unaligned_checkpoints", false},
              {"tolerable_failed_checkpoints", 0},
              {"aligned_checkpoint_timeout", 0},
              {"checkpoints_after_tasks_finish", false}};
}

std::optional<json> backpressure(const job_status& s, const job_graph& g,
                                 const std::string& text, int64_t now_ms) {
  auto id = resolve_vertex(s, g, text);
  if (!id)
    return std::nullopt;
  auto subtasks = json::array();
  double worst = 0;
  for (auto& t : s.subtasks) {
    if (!chain_holds(t.task, *id))
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
                                      const std::string& text) {
  auto id = resolve_vertex(s, g, text);
  if (!id)
    return std::nullopt;
  auto out = json::array();
  for (auto& t : s.subtasks)
    if (chain_holds(t.task, *id))
      out.push_back(
        {{"id", std::to_string(t.subtask) + ".currentInputWatermark"},
         {"value", std::to_string(t.metrics.load.input_watermark)}});
  return out;
}

json checkpoints(const checkpoint_stats& c) {
  auto history = json::array();
  for (auto& e : c.history) // newest first
    history.push_back(checkpoint_entry_json(e));
  // Flink leaves out what never happened.
  json latest = json::object();
  if (c.latest_completed.id > 0)
    latest["completed"] = checkpoint_entry_json(c.latest_completed);
  if (c.latest_savepoint.id > 0)
    latest["savepoint"] = checkpoint_entry_json(c.latest_savepoint);
  if (c.latest_failed.id > 0)
    latest["failed"] = checkpoint_entry_json(c.latest_failed);
  if (c.restored_id > 0) {
    latest["restored"] = {{"id", c.restored_id},
                          {"restore_timestamp", c.restore_time_ms},
                          {"is_savepoint", c.restored_savepoint}};
    if (!c.restored_path.empty())
      latest["restored"]["external_path"] = "file:" + c.restored_path;
  }
  return json{{"counts",
               {{"restored", c.restored},
                {"total", c.total},
                {"in_progress", c.in_progress},
                {"completed", c.completed},
                {"failed", c.failed}}},
              {"summary",
               {{"state_size", summary_json(c.state_size)},
                {"checkpointed_size", summary_json(c.state_size)},
                {"end_to_end_duration", summary_json(c.duration)},
                {"alignment_buffered", summary_json(stats_summary{})},
                {"processed_data", summary_json(stats_summary{})},
                {"persisted_data", summary_json(stats_summary{})}}},
              {"latest", latest},
              {"history", history}};
}

json exceptions(const job_status& s) {
  auto entries = json::array();
  // Newest first, as Flink lists them; no task or location for a failure
  // of the job as a whole, as Flink leaves them out.
  for (auto i = s.exceptions.rbegin(); i != s.exceptions.rend(); ++i) {
    json e{{"exceptionName", "weir.JobFailure"},
           {"stacktrace", i->exception},
           {"timestamp", i->time_ms},
           {"concurrentExceptions", json::array()}};
    if (!i->task.empty())
      e["taskName"] = i->task;
    if (!i->location.empty()) {
      e["location"] = i->location;
      e["taskManagerId"] = flink_resource_id(resource_id{i->location});
    }
    entries.push_back(std::move(e));
  }
  json out{{"all-exceptions", json::array()},
           {"truncated", false},
           {"exceptionHistory", {{"entries", entries}, {"truncated", false}}}};
  // The deprecated root cause, only when the job failed at all.
  if (!s.exceptions.empty()) {
    out["root-exception"] = s.exceptions.back().exception;
    out["timestamp"] = s.exceptions.back().time_ms;
  } else if (!s.error.empty() && s.state == job_state::failed) {
    out["root-exception"] = s.error;
    out["timestamp"] = s.end_time_ms;
  }
  return out;
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

json failure_cause(const std::string& why, const std::string& cls) {
  // Flink's "serialized-throwable" is a Java-serialized exception; weir's
  // is the one-line cause's text, in base64 as Flink's bytes are.
  return json{{"class", cls},
              {"stack-trace", why},
              {"serialized-throwable", base64_encode(why)}};
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
    result["failure-cause"] = failure_cause(s.error);
  return json{{"status", {{"id", "COMPLETED"}}},
              {"job-execution-result", result}};
}

} // namespace weir::rest
