#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "messages/collected_rows.hpp"
#include "messages/record.hpp"
#include "messages/row_batch.hpp"
#include "operators/timers.hpp"
#include "storage/state/keyed_backend.hpp"

namespace weir::ops {

class registry;
class driver_services;

/// An operator's parameters, as given in the job spec (already resolved).
using params = std::map<std::string, std::string>;

/// Thrown by operators when they cannot go on; the subtask reports FAILED with
/// the message, prefixed by the vertex id.
struct operator_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A user counter (Flink's Counter), from operator_context::counter: the
/// operator keeps the handle from open() and counts in its hot path (an
/// add, no lookup). The runtime sums it over the vertex's subtasks and the
/// job's attempts, shows it as `Counter <vertex>.<name>: <value>` and hands
/// it to drivers and hosts (job_result::counter). Not thread-safe, like the
/// operator's other calls: count from the thread that calls the operator.
class counter {
public:
  /// Counts nowhere (a handle not obtained from a context yet).
  counter() = default;
  explicit counter(int64_t* cell) : cell_(cell) {}
  void inc() { add(1); }
  void add(int64_t n) {
    if (cell_ != nullptr)
      *cell_ += n;
  }
  /// This subtask's count so far.
  int64_t value() const { return cell_ != nullptr ? *cell_ : 0; }

private:
  int64_t* cell_ = nullptr;
};

/// One input of a two-input operator (operator_factory::two_inputs, such
/// as interval_join): the vertex that sends it, its rows and the indices
/// of its key fields in them.
struct operator_input {
  std::string from;
  const schema* rows = nullptr;
  std::vector<size_t> key;
};

/// Where an operator instance runs.
struct operator_context {
  std::string job_name;
  std::string vertex_id;
  int32_t subtask_index = 0;
  int32_t parallelism = 1;
  /// How many times the job restarted before this run of the subtask
  /// (Flink's attempt number): 0 on the first run, 1 after the first
  /// failover, and so on. A job recovered by a new JobMaster, or resumed
  /// from a savepoint in a new job, starts at 0 again.
  int32_t attempt_number = 0;
  /// False when some source of the job never ends (streaming): keyed
  /// aggregations then emit updated values after every input batch instead
  /// of once at the end.
  bool bounded = true;
  /// The operator's keyed state (state.backend.type), for operators whose
  /// uses_keyed_state() is true; restored before open().
  state::keyed_backend* keyed_state = nullptr;
  /// Its timers, with the keyed state (docs/event-time.md § Timers):
  /// registered for keyed_state's current key, due in transform::on_timer.
  ops::timer_service* timers = nullptr;
  /// Files attached to the job (`--file`), by file name → local path.
  const std::map<std::string, std::string>* files = nullptr;
  /// The local path of the attached file `name`; throws operator_error
  /// naming it and the attached ones when the job has no such file.
  const std::string& file(const std::string& name) const;
  /// The operators and drivers of the job (built-in and its libraries').
  const registry* operators = nullptr;
  /// For the driver operator: its cluster (driver mode).
  driver_services* driver = nullptr;
  /// The schema of the rows the operator receives (nullptr for a source)
  /// and of those it emits (nullptr for a sink), as the plan derived them.
  const schema* input = nullptr;
  const schema* output = nullptr;
  /// The indices in `*input` of the key fields of the input edge (keyed
  /// operators; empty when the input is not keyed).
  std::vector<size_t> key;
  /// A two-input operator's inputs, by input gate (process_input's
  /// `input`); empty for other operators.
  std::vector<operator_input> inputs;
  /// The side outputs edges take from this operator, by name (the runtime
  /// owns them; use side_output()).
  std::map<std::string, row_batch>* side_batches = nullptr;
  /// This operator's user counters by name (the runtime owns them; use
  /// counter()).
  std::map<std::string, int64_t>* counters = nullptr;

  /// The counter `name` of this operator (created at 0 on first use; the
  /// same cell for the same name). Call it in open() and keep the handle.
  /// Throws operator_error for an empty name.
  /// Where rows of side output `name` go (Flink's OutputTag): a batch of
  /// its schema (operator_factory::side_outputs) that the runtime sends on
  /// after each call, or nullptr when no edge takes that output. Call it in
  /// open() and keep the pointer.
  row_batch* side_output(const std::string& name) const {
    if (side_batches == nullptr)
      return nullptr;
    auto i = side_batches->find(name);
    return i == side_batches->end() ? nullptr : &i->second;
  }

  ops::counter counter(const std::string& name) const {
    if (name.empty())
      throw operator_error("a counter needs a name");
    if (counters == nullptr)
      return {};
    return ops::counter{&(*counters)[name]};
  }
};

/// What an operator's rows look like, from its parameters and its input
/// (docs/rows.md § Schemas): a planner's question, answered before anything
/// runs.
struct schema_query {
  /// The input edge's schema; nullptr for a source.
  const schema* input = nullptr;
  /// The input edge's key fields by name (hash partitioning); empty if none.
  std::vector<std::string> key;
  /// One input edge of a two-input operator.
  struct side {
    std::string from;
    const schema* rows = nullptr;
    std::vector<std::string> key;
  };
  /// A two-input operator's input edges, in the spec's order (`input` and
  /// `key` are the first one's); empty for other operators.
  std::vector<side> inputs;
};

/// The answer: the output schema, or one line saying what does not fit
/// (naming the field and the types), e.g. "field 'bytes' is string, sum
/// needs int64 or double".
struct derived_schema {
  schema value;
  std::string problem;
};


inline const std::string& operator_context::file(const std::string& name) const {
  if (files != nullptr)
    if (auto i = files->find(name); i != files->end())
      return i->second;
  // Inline, so that user libraries need no weir symbol for it.
  std::string attached;
  if (files != nullptr)
    for (const auto& entry : *files)
      attached += (attached.empty() ? "" : ", ") + entry.first;
  throw operator_error("file '" + name + "' is not attached to the job ("
                       + (attached.empty() ? "none is" : "attached: " + attached)
                       + "; attach files with --file)");
}

/// The default of restore_rescaled: throws operator_error, unless no old
/// subtask kept operator state.
inline void refuse_rescaling(const std::vector<std::string>& old_states) {
  for (auto& bytes : old_states)
    if (!bytes.empty())
      throw operator_error(
        "its operator state cannot be split over another parallelism: "
        "restore it at the parallelism it was snapshotted at "
        "(docs/state.md § Rescaling)");
}

/// Produces records until it is exhausted.
class source {
public:
  virtual ~source() = default;
  virtual void open(const operator_context&) {}
  /// Appends at most `max_rows` rows to `out` (its columns are those of
  /// the output schema). Returns false once the source is exhausted (it may
  /// still have appended its last rows).
  virtual bool next(row_batch& out, size_t max_rows) = 0;
  /// How long to wait before `next` may produce again (rate limiting).
  virtual std::chrono::microseconds pause() const { return {}; }
  /// Whether `next` does blocking I/O (the subtask then gets its own thread).
  virtual bool blocking_io() const { return false; }
  /// Checkpoints (Flink's operator state, not keyed): the position to
  /// continue from, as bytes; restore_state() gets them back after open().
  virtual std::string snapshot_state() const { return {}; }
  virtual void restore_state(const std::string&) {}
  /// Rescaling (docs/state.md § Rescaling): the vertex restores at another
  /// parallelism, and `old_states` are the operator states of every subtask
  /// of the old run, in subtask order (Flink's union redistribution). Each
  /// instance keeps its share, after open() (operator_context says which
  /// subtask of how many it is now). The default refuses: the vertex then
  /// restores only at its own parallelism.
  virtual void restore_rescaled(const std::vector<std::string>& old_states) {
    refuse_rescaling(old_states);
  }
};

/// Turns input batches into output batches (map, flat_map, filter, keyed
/// aggregations).
class transform {
public:
  virtual ~transform() = default;
  virtual void open(const operator_context&) {}
  /// Consumes `in` (its columns may be moved from; the caller clears it)
  /// and appends results to `out`, whose columns are the output schema's.
  /// `partial` is true when `in` holds partial aggregates from a combiner.
  virtual void process(row_batch& in, row_batch& out, bool partial) = 0;
  /// A two-input operator's rows from input `input` (an index into
  /// operator_context::inputs, whose schema `in` has).
  virtual void process_input(size_t /*input*/, row_batch& in, row_batch& out) {
    process(in, out, false);
  }
  /// End of all input: append what is still held (keyed aggregations emit one
  /// final row per key here).
  virtual void finish(row_batch&) {}
  /// The event-time watermark reached `watermark` (ms): no input row at or
  /// below it should come any more. Append what that completes (windows
  /// that end by then fire here; docs/event-time.md).
  virtual void on_watermark(int64_t /*watermark*/, row_batch& /*out*/) {}
  /// A timer registered with operator_context::timers is due (Flink's
  /// KeyedProcessFunction#onTimer): the keyed state acts on the timer's
  /// key again. Append what it emits; rows that get no event time of
  /// their own (row_batch::push_time) take the timer's `time`. Event-time
  /// timers fire before on_watermark sees the watermark that made them due.
  virtual void on_timer(int64_t /*time*/, time_domain /*domain*/,
                        row_batch& /*out*/) {}
  /// Input rows dropped on purpose and counted (parse with on_error skip),
  /// and a note on the first of them; the job's counters report them.
  virtual int64_t rows_skipped() const { return 0; }
  virtual std::string skip_note() const { return {}; }
  /// Whether the operator keeps keyed state (operator_context::keyed_state):
  /// the runtime then gives it a backend, and checkpoints and restores it.
  virtual bool uses_keyed_state() const { return false; }
  /// Checkpoints of operator (non-keyed) state, as bytes; restore_state()
  /// gets them back after open().
  virtual std::string snapshot_state() const { return {}; }
  virtual void restore_state(const std::string&) {}
  /// Rescaling (docs/state.md § Rescaling): the vertex restores at another
  /// parallelism, and `old_states` are the operator states of every subtask
  /// of the old run, in subtask order (Flink's union redistribution). Each
  /// instance keeps its share, after open() (operator_context says which
  /// subtask of how many it is now). The default refuses: the vertex then
  /// restores only at its own parallelism.
  virtual void restore_rescaled(const std::vector<std::string>& old_states) {
    refuse_rescaling(old_states);
  }
};

/// Consumes records (text_file, stdout, discard, collect).
class sink {
public:
  virtual ~sink() = default;
  virtual void open(const operator_context&) {}
  virtual void write(const row_batch& in) = 0;
  /// End of input: make the output final (flush, rename in-progress files).
  virtual void finish() {}
  /// The subtask failed or was canceled: remove in-progress output.
  virtual void abort() {}
  virtual bool blocking_io() const { return false; }
  /// How long a deliberately slow sink's write() takes per batch (the
  /// `discard` sink's delay_ms, used to test backpressure). Informational:
  /// the sink takes that time itself, on its own thread (blocking_io()).
  virtual std::chrono::microseconds delay_per_batch() const { return {}; }
  /// For the collect sink: rows to hand to the JobMaster (the runtime
  /// moves them out and leaves the table's rows empty).
  virtual collected_table* collected() { return nullptr; }
  /// Two-phase commit on checkpoints: at checkpoint `id`'s barrier, before
  /// snapshot_state(), make what was written so far durable but invisible;
  /// commit() publishes it once the checkpoint completed everywhere.
  virtual void prepare_commit(int64_t) {}
  virtual void commit(int64_t) {}
  virtual std::string snapshot_state() const { return {}; }
  virtual void restore_state(const std::string&) {}
  /// Rescaling (docs/state.md § Rescaling): the vertex restores at another
  /// parallelism, and `old_states` are the operator states of every subtask
  /// of the old run, in subtask order (Flink's union redistribution). Each
  /// instance keeps its share, after open() (operator_context says which
  /// subtask of how many it is now). The default refuses: the vertex then
  /// restores only at its own parallelism.
  virtual void restore_rescaled(const std::vector<std::string>& old_states) {
    refuse_rescaling(old_states);
  }
};

} // namespace weir::ops
