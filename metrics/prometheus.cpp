#include "metrics/prometheus.hpp"

#include <map>

#include "metrics/metric_values.hpp"
#include "metrics/prometheus_text.hpp"

namespace weir {

namespace {

using kind = prometheus_text::kind;

kind kind_of(const metric_value& m) {
  return m.type == metric_value::kind::counter ? kind::counter : kind::gauge;
}

/// Every metric of `values` under `scope`, labelled `labels`.
void add_all(prometheus_text& out, const std::string& scope,
             const std::vector<metric_value>& values,
             const metric_labels& labels) {
  for (auto& m : values) {
    auto name = scope + m.name;
    out.family(name, kind_of(m), m.help);
    out.add(name, labels, m.value);
  }
}

metric_labels subtask_metric_labels(const subtask_labels& l,
                                    const std::string& tm_id) {
  return {{"job_id", l.job.to_string()},
          {"job_name", l.job_name},
          {"task_id", l.task_id},
          {"task_name", l.task_name},
          {"subtask_index", std::to_string(l.subtask_index)},
          {"task_attempt_num", std::to_string(l.attempt_number)},
          {"tm_id", tm_id}};
}

void cluster_metrics(prometheus_text& out, const jobmanager_metrics_input& in) {
  const std::string p = "weir_jobmanager_";
  add_all(out, p, cluster_metric_values(in.cluster, in.jobs), {});
  std::map<std::string, int64_t> by_state;
  for (auto s : {job_state::created, job_state::running, job_state::failing,
                 job_state::failed, job_state::cancelling, job_state::canceled,
                 job_state::finished, job_state::restarting,
                 job_state::suspended})
    by_state[to_string(s)] = 0;
  for (auto& j : in.jobs)
    ++by_state[to_string(j.state)];
  out.family(p + "numJobs", kind::gauge, "Known jobs by state.");
  for (auto& [state, n] : by_state)
    out.add(p + "numJobs", {{"state", state}}, n);
  out.family(p + "numJobsSubmitted", kind::counter,
             "Submissions accepted since the Dispatcher started.");
  out.add(p + "numJobsSubmitted", {}, in.submissions);
  auto rtt = p + "taskmanager_heartbeatRoundTripMs";
  out.family(rtt, kind::gauge, "Round trip of the ResourceManager's last "
             "answered heartbeat request to the TaskExecutor, ms.");
  for (auto& tm : in.task_managers)
    if (tm.heartbeat_rtt_us >= 0)
      out.add(rtt, {{"tm_id", tm.id.value}},
              static_cast<double>(tm.heartbeat_rtt_us) / 1000.0);
}

} // namespace

std::string jobmanager_metrics_text(const jobmanager_metrics_input& in) {
  prometheus_text out;
  cluster_metrics(out, in);
  const std::string scope = "weir_jobmanager_job_";
  for (auto& j : in.jobs)
    add_all(out, scope, job_metric_values(j, in.now_ms),
            {{"job_id", j.id.to_string()}, {"job_name", j.name}});
  return out.str();
}

std::string taskmanager_metrics_text(const task_metrics::snapshot& s,
                                     const std::string& tm_id,
                                     const process_usage& usage) {
  prometheus_text out;
  const std::string p = "weir_taskmanager_";
  metric_labels tm{{"tm_id", tm_id}};
  using mk = metric_value::kind;
  add_all(out, p,
          {{"taskSlotsTotal", mk::gauge, "Slots of this TaskExecutor.",
            static_cast<double>(s.slots_total)},
           {"taskSlotsAvailable", mk::gauge, "Its free slots.",
            static_cast<double>(s.slots_free)},
           {"Status_Process_RSS", mk::gauge,
            "Resident set size of the process, bytes.",
            static_cast<double>(usage.rss_bytes)},
           {"Status_Process_CPU_Time", mk::counter,
            "CPU time of the process (user and system), seconds.",
            usage.cpu_seconds}},
          tm);
  const std::string task = p + "job_task_";
  const std::string op = task + "operator_";
  for (auto& sub : s.subtasks) {
    auto labels = subtask_metric_labels(sub.labels, tm_id);
    add_all(out, task, subtask_metric_values(sub.metrics), labels);
    for (auto& v : sub.metrics.vertices) {
      auto with_op = labels;
      with_op.emplace_back("operator_name", v.vertex);
      add_all(out, op, operator_metric_values(v), with_op);
    }
  }
  return out.str();
}

} // namespace weir
