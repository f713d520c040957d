#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <caf/meta/type_name.hpp>

#include "messages/ids.hpp"
#include "messages/collected_rows.hpp"
#include "messages/resource_profile.hpp"
#include "messages/states.hpp"

namespace weir {

/// Records in and out of one vertex (operator) and its user counters
/// (operator_context::counter), summed over the subtasks that report it.
/// A source's records in are those it read (as many as it emits); a sink's
/// records out are those it wrote (as many as it received).
struct vertex_metrics {
  std::string vertex;
  int64_t records_in = 0;
  int64_t records_out = 0;
  /// By counter name; a counter its operator registered is here even at 0.
  std::map<std::string, int64_t> counters;
  /// Records the vertex emitted into a combiner on its way out (a hash
  /// edge into count/sum/min/max): `records_out` counts the partial
  /// aggregates that travelled instead, as its consumer reads them.
  int64_t records_combined = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, vertex_metrics& x) {
  return f(caf::meta::type_name("vertex_metrics"), x.vertex, x.records_in,
           x.records_out, x.counters, x.records_combined);
}

bool operator==(const vertex_metrics& a, const vertex_metrics& b);

/// Adds `from` to `into`, vertex by vertex (matched by id; a vertex `into`
/// does not have yet is appended) and counter by counter (by name).
void add_vertex_metrics(std::vector<vertex_metrics>& into,
                        const std::vector<vertex_metrics>& from);

/// How a subtask moves data and spends its time: Flink's task I/O metrics
/// (numBytesIn/Out, busyTimeMsPerSecond, idleTimeMsPerSecond,
/// backPressuredTimeMsPerSecond, inputQueueLength, outputQueueLength).
/// Totals count since the subtask started; rates are per second over the
/// subtask's last metrics window; queues are as sampled at the report.
/// The subtask measures per batch, never per record.
struct task_load {
  int64_t bytes_in = 0;
  int64_t bytes_out = 0;
  /// Processing input or producing; waiting for input; waiting for credit
  /// to send (backpressure). Milliseconds in all.
  int64_t busy_ms = 0;
  int64_t idle_ms = 0;
  int64_t backpressured_ms = 0;
  double records_in_per_s = 0;
  double records_out_per_s = 0;
  double bytes_in_per_s = 0;
  double bytes_out_per_s = 0;
  double busy_ms_per_s = 0;
  double idle_ms_per_s = 0;
  double backpressured_ms_per_s = 0;
  /// Batches received and not yet processed; batches waiting for credit.
  int32_t input_queue = 0;
  int32_t output_queue = 0;
  /// Event time (ms): the subtask's input watermark and the last one it
  /// sent (Flink's currentInputWatermark and currentOutputWatermark; the
  /// lowest int64 before any, as Flink's Long.MIN_VALUE).
  int64_t input_watermark = std::numeric_limits<int64_t>::min();
  int64_t output_watermark = std::numeric_limits<int64_t>::min();
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, task_load& x) {
  return f(caf::meta::type_name("task_load"), x.bytes_in, x.bytes_out,
           x.busy_ms, x.idle_ms, x.backpressured_ms, x.records_in_per_s,
           x.records_out_per_s, x.bytes_in_per_s, x.bytes_out_per_s,
           x.busy_ms_per_s, x.idle_ms_per_s, x.backpressured_ms_per_s,
           x.input_queue, x.output_queue, x.input_watermark,
           x.output_watermark);
}

/// Record counters of a job or subtask.
struct io_metrics {
  int64_t records_in = 0;
  int64_t records_out = 0;
  /// Input rows operators dropped on purpose and counted (parse with
  /// on_error skip), and what was wrong with the first of them.
  int64_t records_skipped = 0;
  std::string skipped_note;
  /// Each vertex's records and user counters (a subtask: those of its
  /// chain; a job: summed over its subtasks), in the job graph's order.
  std::vector<vertex_metrics> vertices;
  /// A subtask's bytes, rates, times and queues (a job's: not kept, zeros;
  /// never stored with a job's result).
  task_load load;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, io_metrics& x) {
  return f(caf::meta::type_name("io_metrics"), x.records_in, x.records_out,
           x.records_skipped, x.skipped_note, x.vertices, x.load);
}

/// One line per user counter, "Counter <vertex>.<name>: <value>" (Flink's
/// operator scope), vertices in the graph's order and names sorted: how
/// `weir run` and `weir status` show them.
std::vector<std::string> counter_lines(const io_metrics& m);

/// What a job ended with: its terminal state, the failure cause (if any),
/// timings, counters and the records its `collect` sinks gathered.
struct job_result {
  job_id id;
  std::string name;
  job_state state = job_state::created;
  std::string error;
  int64_t start_time_ms = 0;
  int64_t end_time_ms = 0;
  io_metrics metrics;
  std::vector<collected_table> collected;
  /// Identifies the job's graph once the graph itself is cleaned up, so
  /// that resubmitting the job id with another graph is refused (0:
  /// unknown, a result stored before weir recorded it).
  uint64_t graph_fingerprint = 0;
  /// A driver job that failed because its driver returned a status other
  /// than 0: that status (the application's exit status); else 0.
  int32_t exit_status = 0;

  /// Whether the job ended FINISHED.
  bool finished() const { return state == job_state::finished; }
  /// From its start to its end, in milliseconds.
  int64_t runtime_ms() const { return end_time_ms - start_time_ms; }
  /// The rows collect sink `sink` gathered (by its step's name); throws
  /// std::out_of_range naming the sinks the job has.
  table_view table(const std::string& sink) const& {
    return table_view{table_of(collected, sink)};
  }
  /// Of a temporary result, the view owns the table.
  table_view table(const std::string& sink) && {
    return table_view{
      std::move(const_cast<collected_table&>(table_of(collected, sink)))};
  }
  /// Vertex `vertex_id`'s records and counters; throws std::out_of_range
  /// naming it when the job has none.
  const vertex_metrics& vertex(const std::string& vertex_id) const;
  /// The counter `name` of vertex `vertex_id` (e.g. counter("tokens",
  /// "bad_lines")); throws std::out_of_range when its operator registered
  /// no such counter (a typo, or a job that failed before it opened).
  int64_t counter(const std::string& vertex_id, const std::string& name) const;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_result& x) {
  return f(caf::meta::type_name("job_result"), x.id, x.name, x.state, x.error,
           x.start_time_ms, x.end_time_ms, x.metrics, x.collected,
           x.graph_fingerprint, x.exit_status);
}

bool operator==(const job_result& a, const job_result& b);

/// One subtask in a detailed job status.
struct subtask_status {
  std::string task;      ///< the chain, e.g. "lines -> words"
  int32_t subtask = 0;   ///< 0-based index
  int32_t parallelism = 1;
  execution_state state = execution_state::created;
  std::string location;  ///< the TaskExecutor running it ("" if none yet)
  /// The job's attempt this execution belongs to (0: the first; Flink's
  /// attempt number).
  int32_t attempt = 0;
  /// When it was deployed (wall clock; 0: not yet) and when it reached a
  /// terminal state (0: it did not).
  int64_t start_time_ms = 0;
  int64_t end_time_ms = 0;
  /// Its chain's records (`vertices` per operator) and its load, as of its
  /// last report.
  io_metrics metrics;
  /// Its chain's key groups (max parallelism; docs/state.md).
  int32_t max_parallelism = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, subtask_status& x) {
  return f(caf::meta::type_name("subtask_status"), x.task, x.subtask,
           x.parallelism, x.state, x.location, x.attempt, x.start_time_ms,
           x.end_time_ms, x.metrics, x.max_parallelism);
}

/// One subtask's acknowledgement of a checkpoint (Flink's
/// SubtaskCheckpointStatistics).
struct subtask_ack {
  std::string task;          ///< its chain, as subtask_status names it
  int32_t subtask = 0;       ///< 0-based index
  int64_t ack_time_ms = 0;   ///< wall clock
  int64_t state_size = 0;    ///< bytes of its chain's state
  int64_t alignment_ms = 0;  ///< how long it aligned its barriers
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, subtask_ack& x) {
  return f(caf::meta::type_name("subtask_ack"), x.task, x.subtask,
           x.ack_time_ms, x.state_size, x.alignment_ms);
}

/// One checkpoint or savepoint in a job's checkpoint statistics (Flink's
/// CheckpointStatistics).
struct checkpoint_entry {
  int64_t id = 0;
  /// Flink's names: IN_PROGRESS, COMPLETED, FAILED.
  std::string status;
  bool savepoint = false;
  int64_t trigger_time_ms = 0;     ///< wall clock
  int64_t latest_ack_time_ms = 0;  ///< wall clock (0: none yet)
  int64_t state_size = 0;          ///< bytes
  int64_t duration_ms = 0;         ///< trigger to completion (or to now)
  /// Longest barrier alignment of a subtask, in milliseconds.
  int64_t alignment_ms = 0;
  int32_t subtasks = 0;
  int32_t acknowledged = 0;
  std::string failure;             ///< why it failed ("" otherwise)
  /// A savepoint's path once written ("" for a checkpoint: it lives in the
  /// state directory, not at an address of its own).
  std::string external_path;
  /// A savepoint that stops the job (Flink's SYNC_SAVEPOINT).
  bool stop = false;
  /// A completed checkpoint that newer ones subsumed (its state deleted).
  bool discarded = false;
  /// The subtasks that acknowledged it, in the order they did.
  std::vector<subtask_ack> acks;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, checkpoint_entry& x) {
  return f(caf::meta::type_name("checkpoint_entry"), x.id, x.status,
           x.savepoint, x.trigger_time_ms, x.latest_ack_time_ms, x.state_size,
           x.duration_ms, x.alignment_ms, x.subtasks, x.acknowledged,
           x.failure, x.external_path, x.stop, x.discarded, x.acks);
}

/// Minimum, maximum, average and percentiles of a checkpoint figure
/// (Flink's StatsSummaryDto): the extremes and average over every
/// completed checkpoint, percentiles over the newest 1000.
struct stats_summary {
  int64_t min = 0;
  int64_t max = 0;
  int64_t avg = 0;
  double p50 = 0;
  double p90 = 0;
  double p95 = 0;
  double p99 = 0;
  double p999 = 0;
};

/// The summary of `values`: their min, max, average and nearest-rank
/// percentiles (all 0 when there are none).
stats_summary summarize(std::vector<int64_t> values);

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, stats_summary& x) {
  return f(caf::meta::type_name("stats_summary"), x.min, x.max, x.avg, x.p50,
           x.p90, x.p95, x.p99, x.p999);
}

/// A job's checkpoint statistics under its current JobMaster (Flink's
/// /jobs/{id}/checkpoints): counts and the newest entries, newest first.
struct checkpoint_stats {
  int64_t restored = 0;
  int64_t total = 0;
  int64_t in_progress = 0;
  int64_t completed = 0;
  int64_t failed = 0;
  /// The checkpoint the job restored from (0: none) and when.
  int64_t restored_id = 0;
  int64_t restore_time_ms = 0;
  /// Whether that was a savepoint, and its path ("" for a checkpoint).
  bool restored_savepoint = false;
  std::string restored_path;
  /// At most the newest 10 (web.checkpoints.history in Flink).
  std::vector<checkpoint_entry> history;
  /// The newest completed checkpoint, savepoint and failed one, kept when
  /// they left the history (id 0: none).
  checkpoint_entry latest_completed;
  checkpoint_entry latest_savepoint;
  checkpoint_entry latest_failed;
  /// Over the completed checkpoints: state size (bytes) and duration (ms).
  stats_summary state_size;
  stats_summary duration;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, checkpoint_stats& x) {
  return f(caf::meta::type_name("checkpoint_stats"), x.restored, x.total,
           x.in_progress, x.completed, x.failed, x.restored_id,
           x.restore_time_ms, x.restored_savepoint, x.restored_path,
           x.history, x.latest_completed, x.latest_savepoint, x.latest_failed,
           x.state_size, x.duration);
}

/// One failure of a job (a restart's cause or its final one; Flink's
/// exception history entry).
struct failure_entry {
  std::string exception;  ///< the one-line cause
  int64_t time_ms = 0;    ///< wall clock
  std::string task;       ///< the failed subtask's chain ("" if the job's)
  std::string location;   ///< its TaskExecutor ("" if none)
  /// The restart this failure caused (1 for the first), and its delay; 0:
  /// none (the job failed, or ended otherwise).
  int32_t restart = 0;
  int64_t restart_delay_ms = 0;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, failure_entry& x) {
  return f(caf::meta::type_name("failure_entry"), x.exception, x.time_ms,
           x.task, x.location, x.restart, x.restart_delay_ms);
}

/// A live view of a job for `list`, `status` and the CLI's progress line.
struct job_status {
  job_id id;
  std::string name;
  job_state state = job_state::created;
  int64_t start_time_ms = 0;
  int64_t end_time_ms = 0; ///< 0 while the job runs
  /// Why the job failed (FAILING, FAILED) or was canceled; empty otherwise.
  std::string error;
  int32_t subtasks_total = 0;
  int32_t subtasks_running = 0;
  int32_t subtasks_finished = 0;
  /// Records of every attempt of the job under its current JobMaster: the
  /// finished attempts' and the current one's (records replayed after a
  /// restart count again), so they never go down while it runs.
  io_metrics metrics;
  /// Records of the current attempt alone (since the last restart).
  io_metrics attempt_metrics;
  /// Restarts of the job under its current JobMaster (0: its first attempt).
  int32_t restarts = 0;
  /// Every subtask, when asked for details and the job still runs.
  std::vector<subtask_status> subtasks;
  /// What every slot of the job must offer (a driver's -Dhm/-Ddm/-Dc/-Dnm;
  /// zeros: anything).
  resource_profile slot_profile;
  /// Slots the job needs (its highest parallelism; 0: not known yet).
  int32_t slots_needed = 0;
  /// Slots it asked for and does not hold yet (0: not waiting for slots).
  int32_t slots_missing = 0;
  /// Since when it waits for them (wall clock; 0 when not waiting).
  int64_t waiting_since_ms = 0;
  /// Why they are missing, as the ResourceManager sees it ("" unknown).
  std::string waiting_for;
  /// The Dispatcher recovered the job when it started (it was unfinished
  /// in the state directory), whatever became of it since.
  bool recovered = false;
  /// Checkpoint statistics and failures, oldest first (at most 16), when
  /// asked for details.
  checkpoint_stats checkpoints;
  std::vector<failure_entry> exceptions;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_status& x) {
  return f(caf::meta::type_name("job_status"), x.id, x.name, x.state,
           x.start_time_ms, x.end_time_ms, x.error, x.subtasks_total,
           x.subtasks_running, x.subtasks_finished, x.metrics,
           x.attempt_metrics, x.restarts, x.subtasks, x.slot_profile,
           x.slots_needed, x.slots_missing, x.waiting_since_ms, x.waiting_for,
           x.recovered,
           x.checkpoints, x.exceptions);
}

/// What a cancel request did: the job's state when it arrived and after it.
/// `before` terminal: the job had ended already; `after` CANCELED: this
/// request canceled it (at once: nothing of it was running); CANCELLING:
/// its subtasks are stopping.
struct cancel_outcome {
  job_state before = job_state::created;
  job_state after = job_state::created;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, cancel_outcome& x) {
  return f(caf::meta::type_name("cancel_outcome"), x.before, x.after);
}

inline bool operator==(const cancel_outcome& a, const cancel_outcome& b) {
  return a.before == b.before && a.after == b.after;
}

/// Milliseconds since the Unix epoch, wall clock.
int64_t now_ms();

} // namespace weir
