#include "cluster/rest_json.hpp"

#include <algorithm>
#include <map>

namespace weir::rest {

namespace {

using nlohmann::json;

/// Flink's end-time: -1 while the job runs.
int64_t end_time(const job_status& s) {
  return is_globally_terminal(s.state) ? s.end_time_ms : -1;
}

int64_t duration(const job_status& s, int64_t now_ms) {
  auto end = is_globally_terminal(s.state) ? s.end_time_ms : now_ms;
  return std::max<int64_t>(0, end - s.start_time_ms);
}

/// Whether chain "a -> b -> c" holds vertex `id`.
bool chain_holds(const std::string& chain, const std::string& id) {
  static const std::string sep = " -> ";
  size_t from = 0;
  for (;;) {
    auto to = chain.find(sep, from);
    auto part = chain.substr(from, to == std::string::npos ? to : to - from);
    if (part == id)
      return true;
    if (to == std::string::npos)
      return false;
    from = to + sep.size();
  }
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
std::string ended_vertex_status(job_state s) {
  switch (s) {
    case job_state::finished:
      return to_string(execution_state::finished);
    case job_state::canceled:
      return to_string(execution_state::canceled);
    default:
      return to_string(execution_state::failed);
  }
}

json vertex(const job_status& s, const vertex_metrics& m) {
  json v{{"id", m.vertex},
         {"name", m.vertex},
         {"metrics",
          {{"read-records", m.records_in}, {"write-records", m.records_out}}}};
  if (is_globally_terminal(s.state)) {
    v["status"] = ended_vertex_status(s.state);
    return v;
  }
  std::map<execution_state, int> counts;
  int parallelism = 0;
  for (auto& t : s.subtasks)
    if (chain_holds(t.task, m.vertex)) {
      ++counts[t.state];
      parallelism = t.parallelism;
    }
  if (parallelism > 0)
    v["parallelism"] = parallelism;
  v["status"] = to_string(aggregate(counts, parallelism));
  return v;
}

} // namespace

json overview(const cluster_overview& cluster,
              const std::vector<job_status>& jobs) {
  int running = 0, finished = 0, cancelled = 0, failed = 0;
  for (auto& j : jobs)
    switch (j.state) {
      case job_state::finished: ++finished; break;
      case job_state::canceled: ++cancelled; break;
      case job_state::failed: ++failed; break;
      default: ++running; // Flink counts every job not ended as running
    }
  return json{{"taskmanagers", cluster.task_executors},
              {"slots-total", cluster.slots_total},
              {"slots-available", cluster.slots_free},
              {"jobs-running", running},
              {"jobs-finished", finished},
              {"jobs-cancelled", cancelled},
              {"jobs-failed", failed},
              {"flink-version", WEIR_VERSION},
              {"weir-version", WEIR_VERSION}};
}

json jobs(const std::vector<job_status>& all) {
  auto list = json::array();
  for (auto& j : all)
    list.push_back({{"id", j.id.to_string()}, {"status", to_string(j.state)}});
  return json{{"jobs", list}};
}

json jobs_overview(const std::vector<job_status>& all, int64_t now_ms) {
  auto list = json::array();
  for (auto& j : all) {
    json x{{"jid", j.id.to_string()},
           {"name", j.name},
           {"state", to_string(j.state)},
           {"start-time", j.start_time_ms},
           {"end-time", end_time(j)},
           {"duration", duration(j, now_ms)}};
    // An ended job's result keeps no subtask counts: none rather than 0.
    if (!is_globally_terminal(j.state))
      x["tasks"] = {{"total", j.subtasks_total},
                    {"running", j.subtasks_running},
                    {"finished", j.subtasks_finished}};
    list.push_back(std::move(x));
  }
  return json{{"jobs", list}};
}

json job_details(const job_status& s, int64_t now_ms) {
  auto vertices = json::array();
  for (auto& m : s.metrics.vertices)
    vertices.push_back(vertex(s, m));
  return json{{"jid", s.id.to_string()},
              {"name", s.name},
              {"state", to_string(s.state)},
              {"start-time", s.start_time_ms},
              {"end-time", end_time(s)},
              {"duration", duration(s, now_ms)},
              {"now", now_ms},
              {"vertices", vertices}};
}

json task_manager(const task_manager_info& tm) {
  auto& hw = tm.hardware;
  return json{{"id", tm.id.value},
              {"slotsNumber", tm.slots_total},
              {"freeSlots", tm.slots_free},
              {"timeSinceLastHeartbeat", tm.last_heartbeat_ms},
              {"hardware",
               {{"cpuCores", hw.cpu_cores},
                {"physicalMemory", hw.physical_memory},
                {"freeMemory", hw.free_memory},
                {"managedMemory", hw.managed_memory}}}};
}

json task_managers(const std::vector<task_manager_info>& tms) {
  auto list = json::array();
  for (auto& tm : tms)
    list.push_back(task_manager(tm));
  return json{{"taskmanagers", std::move(list)}};
}

json errors(const std::string& message) {
  return json{{"errors", json::array({message})}};
}

} // namespace weir::rest
