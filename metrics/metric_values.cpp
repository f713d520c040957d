#include "metrics/metric_values.hpp"

namespace weir {

namespace {

using kind = metric_value::kind;

double as_double(int64_t x) {
  return static_cast<double>(x);
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
  if (c.latest_completed.id > 0)
    return &c.latest_completed;
  for (auto& e : c.history)
    if (e.status == "COMPLETED")
      return &e;
  return nullptr;
}

} // namespace

std::vector<metric_value> job_metric_values(const job_status& j,
                                            int64_t now_ms) {
  auto& c = j.checkpoints;
  auto* last = last_completed(c);
  return {
    {"uptime", kind::gauge, "Milliseconds since the job started while it "
     "runs; -1 once it ended.", as_double(uptime(j, now_ms))},
    {"numRestarts", kind::counter, "Restarts of the job under its current "
     "JobMaster.", as_double(j.restarts)},
    {"totalNumberOfCheckpoints", kind::counter, "Checkpoints triggered.",
     as_double(c.total)},
    {"numberOfCompletedCheckpoints", kind::counter, "Checkpoints completed.",
     as_double(c.completed)},
    {"numberOfFailedCheckpoints", kind::counter, "Checkpoints failed.",
     as_double(c.failed)},
    {"numberOfInProgressCheckpoints", kind::gauge, "Checkpoints in progress.",
     as_double(c.in_progress)},
    {"lastCheckpointDuration", kind::gauge, "Milliseconds the last completed "
     "checkpoint took (-1: none yet).",
     last ? as_double(last->duration_ms) : -1.0},
    {"lastCheckpointSize", kind::gauge, "Bytes of the last completed "
     "checkpoint's state (-1: none yet).",
     last ? as_double(last->state_size) : -1.0},
    {"lastCheckpointAlignmentTime", kind::gauge, "Longest barrier alignment "
     "of a subtask in the last completed checkpoint, ms (-1: none yet).",
     last ? as_double(last->alignment_ms) : -1.0},
  };
}

std::vector<metric_value> subtask_metric_values(const io_metrics& m) {
  auto& l = m.load;
  return {
    {"numRecordsIn", kind::counter, "Records the subtask's chain read.",
     as_double(m.records_in)},
    {"numRecordsOut", kind::counter, "Records the subtask's chain emitted "
     "(a sink: wrote).", as_double(m.records_out)},
    {"numBytesIn", kind::counter, "Bytes of the batches it received.",
     as_double(l.bytes_in)},
    {"numBytesOut", kind::counter, "Bytes of the batches it sent.",
     as_double(l.bytes_out)},
    {"numRecordsInPerSecond", kind::gauge, "Records in per second.",
     l.records_in_per_s},
    {"numRecordsOutPerSecond", kind::gauge, "Records out per second.",
     l.records_out_per_s},
    {"numBytesInPerSecond", kind::gauge, "Bytes in per second.",
     l.bytes_in_per_s},
    {"numBytesOutPerSecond", kind::gauge, "Bytes out per second.",
     l.bytes_out_per_s},
    {"busyTimeMsPerSecond", kind::gauge,
     "Milliseconds per second spent processing or producing.",
     l.busy_ms_per_s},
    {"idleTimeMsPerSecond", kind::gauge,
     "Milliseconds per second spent waiting for input.", l.idle_ms_per_s},
    {"backPressuredTimeMsPerSecond", kind::gauge,
     "Milliseconds per second spent waiting for credit to send.",
     l.backpressured_ms_per_s},
    {"accumulatedBusyTime", kind::counter, "Milliseconds busy in all.",
     as_double(l.busy_ms)},
    {"accumulatedIdleTime", kind::counter, "Milliseconds idle in all.",
     as_double(l.idle_ms)},
    {"accumulatedBackPressuredTime", kind::counter,
     "Milliseconds back-pressured in all.", as_double(l.backpressured_ms)},
    {"buffers_inputQueueLength", kind::gauge,
     "Batches received and not yet processed.", as_double(l.input_queue)},
    {"buffers_outputQueueLength", kind::gauge,
     "Batches waiting for credit to be sent.", as_double(l.output_queue)},
    {"currentInputWatermark", kind::gauge,
     "Event time (ms) of the subtask's input watermark: the least of its "
     "channels' (the lowest int64 before any).",
     as_double(l.input_watermark)},
    {"currentOutputWatermark", kind::gauge,
     "Event time (ms) of the last watermark the subtask sent.",
     as_double(l.output_watermark)},
  };
}

std::vector<metric_value> operator_metric_values(const vertex_metrics& v) {
  return {
    {"numRecordsIn", kind::counter, "Records the operator read.",
     as_double(v.records_in)},
    {"numRecordsOut", kind::counter, "Records the operator emitted (into "
     "a combiner: the partial aggregates that travelled).",
     as_double(v.records_out)},
    {"numRecordsCombined", kind::counter, "Records the operator emitted into "
     "a combiner, which pre-aggregates them before a hash edge.",
     as_double(v.records_combined)},
  };
}

std::vector<metric_value>
cluster_metric_values(const cluster_overview& c,
                      const std::vector<job_status>& jobs) {
  int64_t running = 0;
  for (auto& j : jobs)
    running += j.state == job_state::running ? 1 : 0;
  return {
    {"numRegisteredTaskManagers", kind::gauge, "TaskExecutors registered.",
     as_double(c.task_executors)},
    {"taskSlotsTotal", kind::gauge, "Slots of the registered TaskExecutors.",
     as_double(c.slots_total)},
    {"taskSlotsAvailable", kind::gauge, "Free slots.",
     as_double(c.slots_free)},
    {"numPendingSlotRequests", kind::gauge,
     "Slot requests waiting for a slot.", as_double(c.pending_requests)},
    {"numRunningJobs", kind::gauge, "Jobs RUNNING.", as_double(running)},
  };
}

std::vector<metric_value>
task_manager_metric_values(const task_manager_info& tm) {
  std::vector<metric_value> out{
    {"taskSlotsTotal", kind::gauge, "Slots of this TaskExecutor.",
     as_double(tm.slots_total)},
    {"taskSlotsAvailable", kind::gauge, "Its free slots.",
     as_double(tm.slots_free)},
  };
  if (tm.heartbeat_rtt_us >= 0)
    out.push_back({"heartbeatRoundTripMs", kind::gauge,
                   "Round trip of the ResourceManager's last answered "
                   "heartbeat request to it, ms.",
                   static_cast<double>(tm.heartbeat_rtt_us) / 1000.0});
  return out;
}

} // namespace weir
