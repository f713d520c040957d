#include "rest/json.hpp"

#include <algorithm>

#include <map>

#include "config/config_key.hpp"
#include "messages/flink_ids.hpp"

#include <fmt/format.h>

namespace weir::rest {

using nlohmann::json;

int64_t end_time(const job_status& s) {
  return is_globally_terminal(s.state) ? s.end_time_ms : -1;
}

int64_t duration(const job_status& s, int64_t now_ms) {
  auto end = is_globally_terminal(s.state) ? s.end_time_ms : now_ms;
  return std::max<int64_t>(0, end - s.start_time_ms);
}

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
              {"flink-commit", revision},
              {"weir-version", WEIR_VERSION}};
}

json jobs(const std::vector<job_status>& all) {
  auto list = json::array();
  for (auto& j : all)
    list.push_back({{"id", j.id.to_string()}, {"status", to_string(j.state)}});
  return json{{"jobs", list}};
}

namespace {

/// Flink's JobDetails "tasks": the job's subtasks by state (lower-case
/// ExecutionState names) and their total. An ended job's subtasks all
/// ended as it did.
json task_counts(const job_status& j) {
  std::map<std::string, int> n;
  for (auto x : {"created", "scheduled", "deploying", "running", "finished",
                 "canceling", "canceled", "failed", "reconciling",
                 "initializing"})
    n[x] = 0;
  auto lower = [](execution_state x) {
    auto name = to_string(x);
    std::transform(name.begin(), name.end(), name.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    return name;
  };
  if (is_globally_terminal(j.state)) {
    auto end = j.state == job_state::finished   ? execution_state::finished
               : j.state == job_state::canceled ? execution_state::canceled
                                                : execution_state::failed;
    n[lower(end)] = j.subtasks_total;
  } else if (!j.subtasks.empty()) {
    for (auto& t : j.subtasks)
      ++n[lower(t.state)];
  } else {
    n["running"] = j.subtasks_running;
    n["finished"] = j.subtasks_finished;
    n["created"] = j.subtasks_total - j.subtasks_running - j.subtasks_finished;
  }
  json out{{"total", j.subtasks_total}};
  for (auto& [k, v] : n)
    out[k] = v;
  return out;
}

} // namespace

json jobs_overview(const std::vector<job_status>& all, int64_t now_ms) {
  auto list = json::array();
  for (auto& j : all)
    list.push_back({{"jid", j.id.to_string()},
                    {"name", j.name},
                    {"state", to_string(j.state)},
                    {"start-time", j.start_time_ms},
                    {"end-time", end_time(j)},
                    {"duration", duration(j, now_ms)},
                    // weir times a job's start and end, not the changes
                    // between.
                    {"last-modification", is_globally_terminal(j.state)
                                            ? j.end_time_ms
                                            : j.start_time_ms},
                    {"tasks", task_counts(j)}});
  return json{{"jobs", list}};
}

json dashboard_config() {
  return json{{"refresh-interval", 2000},
              {"timezone-name", "UTC"},
              {"timezone-offset", 0},
              {"flink-version", WEIR_VERSION},
              {"weir-version", WEIR_VERSION},
              {"flink-revision", revision},
              {"features",
               {{"web-submit", false},
                {"web-cancel", true},
                {"web-history", false}}}};
}

json jobmanager_config(const configuration& cfg) {
  auto set = cfg.set_with_prefix("");
  auto list = json::array();
  for (auto& k : config_keys()) {
    std::string key{k.name};
    auto i = set.find(key);
    if (i == set.end() && k.default_value.empty())
      continue; // unset and without a default: no value to show
    auto value = i != set.end() ? i->second : std::string{k.default_value};
    // As Flink's GlobalConfiguration.isSensitive: never show secrets.
    if (key.find("password") != std::string::npos
        || key.find("secret") != std::string::npos)
      value = "******";
    list.push_back({{"key", key}, {"value", value}});
  }
  return list;
}

namespace {

/// Flink's ResourceProfileInfo of `p` (memory in MiB).
json resource_json(double cpu_cores, int64_t heap_mb, int64_t off_heap_mb,
                   int64_t managed_mb) {
  return json{{"cpuCores", cpu_cores},
              {"taskHeapMemory", heap_mb},
              {"taskOffHeapMemory", off_heap_mb},
              {"managedMemory", managed_mb},
              {"networkMemory", 0},
              {"extendedResources", json::object()}};
}

json profile_json(const resource_profile& p) {
  return resource_json(p.cpu_cores, p.heap_mb, p.direct_mb, p.native_mb);
}

/// What slots offer together (each slot's declared profile; a slot that
/// declares none counts as nothing).
resource_profile sum(const std::vector<slot_status>& slots, bool free_only) {
  resource_profile out;
  for (auto& s : slots)
    if (!free_only || !s.alloc.valid()) {
      out.cpu_cores += s.profile.cpu_cores;
      out.heap_mb += s.profile.heap_mb;
      out.direct_mb += s.profile.direct_mb;
      out.native_mb += s.profile.native_mb;
    }
  return out;
}

json task_manager_json(const task_manager_info& tm) {
  auto& hw = tm.hardware;
  auto path = tm.data.valid()
                ? fmt::format("weir://{}:{}/{}", tm.data.host, tm.data.port,
                              tm.id.value)
                : "weir://local/" + tm.id.value;
  return json{{"id", flink_resource_id(tm.id)},
              {"weir-name", tm.id.value},
              {"path", path},
              {"dataPort", tm.data.port},
              {"jmxPort", -1}, // no JMX: Flink's "not started"
              {"slotsNumber", tm.slots_total},
              {"freeSlots", tm.slots_free},
              {"timeSinceLastHeartbeat", tm.last_heartbeat_ms},
              {"totalResource", profile_json(sum(tm.slots, false))},
              {"freeResource", profile_json(sum(tm.slots, true))},
              {"hardware",
               {{"cpuCores", hw.cpu_cores},
                {"physicalMemory", hw.physical_memory},
                {"freeMemory", hw.free_memory},
                {"managedMemory", hw.managed_memory}}},
              {"memoryConfiguration",
               {{"managedMemory", hw.managed_memory}}}};
}

} // namespace

json task_manager(const task_manager_info& tm) {
  auto out = task_manager_json(tm);
  auto slots = json::array();
  for (auto& s : tm.slots)
    if (s.alloc.valid())
      slots.push_back({{"jobId", s.job.to_string()},
                       {"resource", profile_json(s.profile)}});
  out["allocatedSlots"] = slots;
  out["metrics"] = json::object(); // weir has no JVM to report on
  return out;
}

json task_managers(const std::vector<task_manager_info>& tms) {
  auto list = json::array();
  for (auto& tm : tms)
    list.push_back(task_manager_json(tm));
  return json{{"taskmanagers", std::move(list)}};
}

json errors(const std::string& message) {
  return json{{"errors", json::array({message})}};
}

} // namespace weir::rest
