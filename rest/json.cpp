#include "rest/json.hpp"

#include <algorithm>

#include "config/config_key.hpp"
#include <map>

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

json dashboard_config() {
  return json{{"refresh-interval", 2000},
              {"timezone-name", "UTC"},
              {"timezone-offset", 0},
              {"flink-version", WEIR_VERSION},
              {"weir-version", WEIR_VERSION},
              {"flink-revision", "weir"},
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

json task_manager(const task_manager_info& tm) {
  auto& hw = tm.hardware;
  return json{{"id", tm.id.value},
              {"slotsNumber", tm.slots_total},
              {"freeSlots", tm.slots_free},
              {"timeSinceLastHeartbeat", tm.last_heartbeat_ms},
              {"dataPort", tm.data.port},
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
