#include "metrics/prometheus.hpp"

#include <unistd.h>

#include <map>

#include "messages/flink_ids.hpp"
#include "metrics/metric_values.hpp"
#include "metrics/prometheus_text.hpp"

namespace weir {

namespace {

using kind = prometheus_text::kind;

/// Every metric of `values` under `scope`, labelled `labels`. Gauges all,
/// counters too: Flink's reporter exports its counters as gauges (they
/// may start again at 0), and dashboards written for it expect that.
void add_all(prometheus_text& out, const std::string& scope,
             const std::vector<metric_value>& values,
             const metric_labels& labels) {
  for (auto& m : values) {
    auto name = scope + m.name;
    out.family(name, kind::gauge, m.help);
    out.add(name, labels, m.value);
  }
}

/// Flink's task scope labels (task_id: the chain's 32-hex id, that of its
/// first vertex).
metric_labels subtask_metric_labels(const subtask_labels& l,
                                    const metric_labels& tm) {
  auto out = tm;
  out.insert(out.end(),
             {{"job_id", l.job.to_string()},
              {"job_name", l.job_name},
              {"task_id", flink_vertex_id(l.job, l.task_id)},
              {"task_name", l.task_name},
              {"subtask_index", std::to_string(l.subtask_index)},
              {"task_attempt_num", std::to_string(l.attempt_number)}});
  return out;
}

void cluster_metrics(prometheus_text& out, const jobmanager_metrics_input& in,
                     const std::string& p, const metric_labels& host) {
  add_all(out, p, cluster_metric_values(in.cluster, in.jobs), host);
  std::map<std::string, int64_t> by_state;
  for (auto s : {job_state::created, job_state::running, job_state::failing,
                 job_state::failed, job_state::cancelling, job_state::canceled,
                 job_state::finished, job_state::restarting,
                 job_state::suspended})
    by_state[to_string(s)] = 0;
  for (auto& j : in.jobs)
    ++by_state[to_string(j.state)];
  out.family(p + "numJobs", kind::gauge, "Known jobs by state.");
  for (auto& [state, n] : by_state) {
    auto labels = host;
    labels.emplace_back("state", state);
    out.add(p + "numJobs", labels, n);
  }
  out.family(p + "numJobsSubmitted", kind::gauge,
             "Submissions accepted since the Dispatcher started.");
  out.add(p + "numJobsSubmitted", host, in.submissions);
  auto rtt = p + "taskmanager_heartbeatRoundTripMs";
  out.family(rtt, kind::gauge, "Round trip of the ResourceManager's last "
             "answered heartbeat request to the TaskExecutor, ms.");
  for (auto& tm : in.task_managers)
    if (tm.heartbeat_rtt_us >= 0) {
      auto labels = host;
      labels.emplace_back("tm_id", flink_resource_id(tm.id));
      out.add(rtt, labels, static_cast<double>(tm.heartbeat_rtt_us) / 1000.0);
    }
}

} // namespace

std::string metric_host_name() {
  char host[256] = "localhost";
  gethostname(host, sizeof(host) - 1);
  return host;
}

std::string jobmanager_metrics_text(const jobmanager_metrics_input& in,
                                    const metric_naming& naming) {
  prometheus_text out;
  metric_labels host{{"host", naming.host}};
  auto p = naming.prefix + "_jobmanager_";
  cluster_metrics(out, in, p, host);
  for (auto& j : in.jobs) {
    auto labels = host;
    labels.insert(labels.end(),
                  {{"job_id", j.id.to_string()}, {"job_name", j.name}});
    add_all(out, p + "job_", job_metric_values(j, in.now_ms), labels);
  }
  return out.str();
}

std::string taskmanager_metrics_text(const task_metrics::snapshot& s,
                                     const std::string& tm_name,
                                     const process_usage& usage,
                                     const metric_naming& naming) {
  prometheus_text out;
  auto p = naming.prefix + "_taskmanager_";
  metric_labels tm{{"host", naming.host},
                   {"tm_id", flink_resource_id(resource_id{tm_name})}};
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
    auto labels = subtask_metric_labels(sub.labels, tm);
    add_all(out, task, subtask_metric_values(sub.metrics), labels);
    for (auto& v : sub.metrics.vertices) {
      auto with_op = labels;
      with_op.emplace_back("operator_id", flink_vertex_id(sub.labels.job, v.vertex));
      with_op.emplace_back("operator_name", v.vertex);
      add_all(out, op, operator_metric_values(v), with_op);
    }
  }
  return out.str();
}

} // namespace weir
