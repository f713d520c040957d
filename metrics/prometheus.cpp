#include "metrics/prometheus.hpp"

#include <map>

#include "metrics/prometheus_text.hpp"

namespace weir {

namespace {

using kind = prometheus_text::kind;

/// One metric of a scope: its name after the scope, type, help and value.
template <class T>
struct metric_def {
  const char* name;
  kind type;
  const char* help;
  double (*value)(const T&);
};

template <class T>
void add_all(prometheus_text& out, const std::string& scope,
             const std::vector<metric_def<T>>& defs,
             const metric_labels& labels, const T& x) {
  for (auto& d : defs) {
    auto name = scope + d.name;
    out.family(name, d.type, d.help);
    out.add(name, labels, d.value(x));
  }
}

double as_double(int64_t x) {
  return static_cast<double>(x);
}

const std::vector<metric_def<io_metrics>>& subtask_defs() {
  static const std::vector<metric_def<io_metrics>> defs{
    {"numRecordsIn", kind::counter, "Records the subtask's chain read.",
     [](const io_metrics& m) { return as_double(m.records_in); }},
    {"numRecordsOut", kind::counter, "Records the subtask's chain emitted "
     "(a sink: wrote).",
     [](const io_metrics& m) { return as_double(m.records_out); }},
    {"numBytesIn", kind::counter, "Bytes of the batches it received.",
     [](const io_metrics& m) { return as_double(m.load.bytes_in); }},
    {"numBytesOut", kind::counter, "Bytes of the batches it sent.",
     [](const io_metrics& m) { return as_double(m.load.bytes_out); }},
    {"numRecordsInPerSecond", kind::gauge, "Records in per second.",
     [](const io_metrics& m) { return m.load.records_in_per_s; }},
    {"numRecordsOutPerSecond", kind::gauge, "Records out per second.",
     [](const io_metrics& m) { return m.load.records_out_per_s; }},
    {"numBytesInPerSecond", kind::gauge, "Bytes in per second.",
     [](const io_metrics& m) { return m.load.bytes_in_per_s; }},
    {"numBytesOutPerSecond", kind::gauge, "Bytes out per second.",
     [](const io_metrics& m) { return m.load.bytes_out_per_s; }},
    {"busyTimeMsPerSecond", kind::gauge,
     "Milliseconds per second spent processing or producing.",
     [](const io_metrics& m) { return m.load.busy_ms_per_s; }},
    {"idleTimeMsPerSecond", kind::gauge,
     "Milliseconds per second spent waiting for input.",
     [](const io_metrics& m) { return m.load.idle_ms_per_s; }},
    {"backPressuredTimeMsPerSecond", kind::gauge,
     "Milliseconds per second spent waiting for credit to send.",
     [](const io_metrics& m) { return m.load.backpressured_ms_per_s; }},
    {"accumulatedBusyTime", kind::counter, "Milliseconds busy in all.",
     [](const io_metrics& m) { return as_double(m.load.busy_ms); }},
    {"accumulatedIdleTime", kind::counter, "Milliseconds idle in all.",
     [](const io_metrics& m) { return as_double(m.load.idle_ms); }},
    {"accumulatedBackPressuredTime", kind::counter,
     "Milliseconds back-pressured in all.",
     [](const io_metrics& m) { return as_double(m.load.backpressured_ms); }},
    {"buffers_inputQueueLength", kind::gauge,
     "Batches received and not yet processed.",
     [](const io_metrics& m) { return as_double(m.load.input_queue); }},
    {"buffers_outputQueueLength", kind::gauge,
     "Batches waiting for credit to be sent.",
     [](const io_metrics& m) { return as_double(m.load.output_queue); }},
    {"currentInputWatermark", kind::gauge,
     "Event time (ms) of the subtask's input watermark: the least of its "
     "channels' (the lowest int64 before any).",
     [](const io_metrics& m) { return as_double(m.load.input_watermark); }},
    {"currentOutputWatermark", kind::gauge,
     "Event time (ms) of the last watermark the subtask sent.",
     [](const io_metrics& m) { return as_double(m.load.output_watermark); }},
  };
  return defs;
}

const std::vector<metric_def<vertex_metrics>>& operator_defs() {
  static const std::vector<metric_def<vertex_metrics>> defs{
    {"numRecordsIn", kind::counter, "Records the operator read.",
     [](const vertex_metrics& v) { return as_double(v.records_in); }},
    {"numRecordsOut", kind::counter, "Records the operator emitted (into "
     "a combiner: the partial aggregates that travelled).",
     [](const vertex_metrics& v) { return as_double(v.records_out); }},
    {"numRecordsCombined", kind::counter, "Records the operator emitted into "
     "a combiner, which pre-aggregates them before a hash edge.",
     [](const vertex_metrics& v) { return as_double(v.records_combined); }},
  };
  return defs;
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

/// Flink's uptime gauge: milliseconds since the job started while it
/// runs, -1 once it ended, 0 before.
int64_t uptime(const job_status& j, int64_t now_ms) {
  if (is_globally_terminal(j.state))
    return -1;
  if (j.state == job_state::created || j.start_time_ms == 0)
    return 0;
  return now_ms - j.start_time_ms;
}

/// The newest completed checkpoint (none: nullptr).
const checkpoint_entry* last_completed(const checkpoint_stats& c) {
  for (auto& e : c.history)
    if (e.status == "COMPLETED")
      return &e;
  return nullptr;
}

const std::vector<metric_def<job_status>>& job_defs() {
  static const std::vector<metric_def<job_status>> defs{
    {"numRestarts", kind::counter, "Restarts of the job under its current "
     "JobMaster.",
     [](const job_status& j) { return static_cast<double>(j.restarts); }},
    {"totalNumberOfCheckpoints", kind::counter, "Checkpoints triggered.",
     [](const job_status& j) { return as_double(j.checkpoints.total); }},
    {"numberOfCompletedCheckpoints", kind::counter, "Checkpoints completed.",
     [](const job_status& j) { return as_double(j.checkpoints.completed); }},
    {"numberOfFailedCheckpoints", kind::counter, "Checkpoints failed.",
     [](const job_status& j) { return as_double(j.checkpoints.failed); }},
    {"numberOfInProgressCheckpoints", kind::gauge, "Checkpoints in progress.",
     [](const job_status& j) {
       return as_double(j.checkpoints.in_progress);
     }},
    {"lastCheckpointDuration", kind::gauge, "Milliseconds the last completed "
     "checkpoint took (-1: none yet).",
     [](const job_status& j) {
       auto* e = last_completed(j.checkpoints);
       return e ? as_double(e->duration_ms) : -1.0;
     }},
    {"lastCheckpointSize", kind::gauge, "Bytes of the last completed "
     "checkpoint's state (-1: none yet).",
     [](const job_status& j) {
       auto* e = last_completed(j.checkpoints);
       return e ? as_double(e->state_size) : -1.0;
     }},
    {"lastCheckpointAlignmentTime", kind::gauge, "Longest barrier alignment "
     "of a subtask in the last completed checkpoint, ms (-1: none yet).",
     [](const job_status& j) {
       auto* e = last_completed(j.checkpoints);
       return e ? as_double(e->alignment_ms) : -1.0;
     }},
  };
  return defs;
}

void cluster_metrics(prometheus_text& out, const jobmanager_metrics_input& in) {
  const std::string p = "weir_jobmanager_";
  auto gauge = [&](const char* name, const char* help, int64_t value,
                   kind k = kind::gauge) {
    out.family(p + name, k, help);
    out.add(p + name, {}, value);
  };
  gauge("numRegisteredTaskManagers", "TaskExecutors registered.",
        in.cluster.task_executors);
  gauge("taskSlotsTotal", "Slots of the registered TaskExecutors.",
        in.cluster.slots_total);
  gauge("taskSlotsAvailable", "Free slots.", in.cluster.slots_free);
  gauge("numPendingSlotRequests", "Slot requests waiting for a slot.",
        in.cluster.pending_requests);
  int64_t running = 0;
  std::map<std::string, int64_t> by_state;
  for (auto s : {job_state::created, job_state::running, job_state::failing,
                 job_state::failed, job_state::cancelling, job_state::canceled,
                 job_state::finished, job_state::restarting,
                 job_state::suspended})
    by_state[to_string(s)] = 0;
  for (auto& j : in.jobs) {
    ++by_state[to_string(j.state)];
    running += j.state == job_state::running ? 1 : 0;
  }
  gauge("numRunningJobs", "Jobs RUNNING.", running);
  out.family(p + "numJobs", kind::gauge, "Known jobs by state.");
  for (auto& [state, n] : by_state)
    out.add(p + "numJobs", {{"state", state}}, n);
  gauge("numJobsSubmitted", "Submissions accepted since the Dispatcher "
        "started.", in.submissions, kind::counter);
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
  out.family(scope + "uptime", kind::gauge, "Milliseconds since the job "
             "started while it runs; -1 once it ended.");
  for (auto& j : in.jobs) {
    metric_labels labels{{"job_id", j.id.to_string()}, {"job_name", j.name}};
    out.add(scope + "uptime", labels, uptime(j, in.now_ms));
    add_all(out, scope, job_defs(), labels, j);
  }
  return out.str();
}

std::string taskmanager_metrics_text(const task_metrics::snapshot& s,
                                     const std::string& tm_id,
                                     const process_usage& usage) {
  prometheus_text out;
  const std::string p = "weir_taskmanager_";
  metric_labels tm{{"tm_id", tm_id}};
  auto gauge = [&](const char* name, const char* help, double value,
                   kind k = kind::gauge) {
    out.family(p + name, k, help);
    out.add(p + name, tm, value);
  };
  gauge("taskSlotsTotal", "Slots of this TaskExecutor.", s.slots_total);
  gauge("taskSlotsAvailable", "Its free slots.", s.slots_free);
  gauge("Status_Process_RSS", "Resident set size of the process, bytes.",
        as_double(usage.rss_bytes));
  gauge("Status_Process_CPU_Time", "CPU time of the process (user and "
        "system), seconds.", usage.cpu_seconds, kind::counter);
  const std::string task = p + "job_task_";
  const std::string op = task + "operator_";
  for (auto& sub : s.subtasks) {
    auto labels = subtask_metric_labels(sub.labels, tm_id);
    add_all(out, task, subtask_defs(), labels, sub.metrics);
    for (auto& v : sub.metrics.vertices) {
      auto with_op = labels;
      with_op.emplace_back("operator_name", v.vertex);
      add_all(out, op, operator_defs(), with_op, v);
    }
  }
  return out.str();
}

} // namespace weir
