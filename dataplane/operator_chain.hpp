#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "dataplane/chain_env.hpp"
#include "dataplane/output_gate.hpp"
#include "messages/deployment.hpp"
#include "messages/job_result.hpp"
#include "operators/driver_services.hpp"
#include "operators/keyed_timers.hpp"
#include "operators/operator.hpp"
#include "storage/state/keyed_backend.hpp"

namespace weir {

/// A failure of user code (an operator from a user library): its message
/// names the vertex, the operator and the subtask already, e.g. "vertex
/// 'b' (operator 'parse_count', subtask 1/2) threw std::invalid_argument:
/// stoll", so the runner adds no prefix.
struct user_code_error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A subtask's part of a checkpoint: the vertices whose state is complete,
/// and those whose state is still to be written (`deferred`: run each off
/// the processing thread; it returns the vertex's bytes).
struct chain_snapshot {
  operator_states ready;
  std::vector<std::pair<std::string, std::function<std::string()>>> deferred;
};

/// The operators of one subtask, chained: an optional source, transforms,
/// and either a sink or output gates. Plain class: the subtask actor feeds
/// it batches and sends what its gates release.
class operator_chain {
public:
  /// Builds every operator (no I/O yet); throws ops::operator_error.
  /// User operators come from the libraries in env.code.
  operator_chain(const task_deployment& d, const chain_env& env);
  /// Only built-in operators, keyed state on the heap.
  operator_chain(const task_deployment& d, const exchange_options& opts);
  ~operator_chain();

  /// Restores keyed state from `restore` (a checkpoint's states of this
  /// subtask; empty for a fresh start), opens every operator (files are
  /// opened here), then restores their operator state. Throws
  /// ops::operator_error naming the vertex.
  void open(const operator_states& restore = {});

  bool has_source() const { return source_ != nullptr; }
  bool blocking_io() const;

  /// Pulls one batch from the source through the chain; false once the
  /// source is exhausted.
  bool run_source();

  /// Pushes an input batch of gate `gate` through the chain. Throws
  /// ops::operator_error when its columns are not the gate's schema (bytes
  /// from the network are checked, not trusted).
  void process(size_t gate, row_batch& batch);

  /// End of all input: lets aggregations emit, closes open batches and
  /// finishes the sink. Without `drain` (a stop that suspends the job) the
  /// transforms are not finished: their windows, timers and aggregates
  /// stay in the savepoint for the job that resumes from it.
  void finish(bool drain = true);

  // -- event time (docs/event-time.md) ---------------------------------------

  /// The subtask's input watermark advanced to `wm`: the operators up to
  /// the chain's watermark assigner (all, without one) fire what it
  /// completes. It goes on to the outputs only from a chain that does not
  /// make its own watermarks (the runner sends it).
  void on_input_watermark(int64_t wm);
  /// Whether a vertex of the chain makes watermarks ("watermarks").
  bool makes_watermarks() const { return assigner_ < links_.size(); }
  /// Its settings (makes_watermarks() only).
  const watermark_spec& watermarks() const {
    return links_[assigner_].watermarks;
  }
  /// The assigner's watermark so far: the largest event time it stamped
  /// less the out-of-orderness, less 1 ms (no_watermark before any row).
  int64_t generated_watermark() const;
  /// Rows the assigner stamped so far (its idleness).
  int64_t stamped_rows() const { return stamped_rows_; }
  /// The assigner's watermark `wm` is due: the operators after it fire
  /// what it completes, then it goes out on every output.
  void on_generated_watermark(int64_t wm);
  /// Sends `mark` on every output (a sink has none).
  void emit_mark(const watermark_mark& mark);

  /// The earliest processing-time timer of the chain's operators (nullopt:
  /// none), for the runner to call on_processing_time then.
  std::optional<int64_t> next_processing_timer();
  /// The clock reached `now`: the operators' processing-time timers due by
  /// then fire, in time order, and what they emit goes on.
  void on_processing_time(int64_t now);

  /// Removes in-progress sink output (failure or cancel).
  void abort();

  /// Checkpoint `checkpoint`'s barrier reached the sink: its output so far
  /// becomes durable but stays invisible (phase one of two).
  void prepare_commit(int64_t checkpoint);

  /// The checkpoint completed everywhere: the sink publishes its output.
  void commit(int64_t checkpoint);

  /// The state of every stateful operator, by vertex id, for checkpoint
  /// `id` (state::vertex_snapshot bytes).
  chain_snapshot snapshot(int64_t id, state::snapshot_kind kind);

  /// The deferred parts of checkpoint `id` were written (keyed state
  /// backends fold their copy-on-write layers).
  void snapshot_written(int64_t id);

  std::vector<output_gate>& gates() { return gates_; }
  ops::source* source() { return source_.get(); }
  ops::sink* sink() { return sink_.get(); }
  /// Rows in and out of the chain, those its transforms skipped, and each
  /// vertex's rows and user counters.
  io_metrics metrics() const;

  /// Whether any gate has batches waiting for credit.
  bool backlogged() const;

private:
  /// Runs `batch` through the transforms from link `first` on (the first
  /// of them gets it as partial aggregates if `partial`), then delivers it.
  void push(row_batch& batch, size_t first, bool partial);
  void deliver(row_batch& batch);
  /// Sends what the last operator appended to its side outputs to the
  /// gates that take them.
  void deliver_side_outputs();
  /// What link `c` emitted leaves it: a vertex with "watermarks" stamps
  /// each row's event time from its field.
  void stamp(size_t c, row_batch& batch);
  /// The transforms of links [from, to) see watermark `wm` in order, what
  /// each fires passing through the links after it.
  void fire(size_t from, size_t to, int64_t wm);
  /// Link `c`'s timers of `d` due at `t` fire into `out`, in time order.
  void fire_timers(size_t c, ops::time_domain d, int64_t t, row_batch& out);
  /// At the end of the input: every timer link `c` has now fires once,
  /// event time first; timers registered meanwhile do not.
  void fire_remaining_timers(size_t c, row_batch& out);
  /// Timers as (time, key), in time order.
  using timer_list = std::vector<std::pair<int64_t, std::string>>;
  /// Link `c`'s timers of `d` now.
  timer_list timers_of(size_t c, ops::time_domain d);
  /// Each of `listed` that is still there fires once, in order; then every
  /// timer of `d` link `c` has is dropped (those registered meanwhile).
  void fire_listed(size_t c, ops::time_domain d, const timer_list& listed,
                   row_batch& out);
  /// What link `c` emitted (`batch`) leaves it: counted, stamped and
  /// pushed through the links after it.
  void pass_on(size_t c, row_batch& batch);
  /// Calls link `c`'s on_timer for (`time`, `d`) into `out`; rows that got
  /// no event time take `time`.
  void call_on_timer(size_t c, int64_t time, ops::time_domain d,
                     row_batch& out);

  /// The operator of context `i`, whichever kind it is.
  template <class F>
  void visit(size_t i, F&& f);

  /// Runs `f`, a call into the operator of context `i`. For a user
  /// operator the call is marked for the crash handler, and what it throws
  /// becomes a user_code_error naming it.
  template <class F>
  decltype(auto) call(size_t i, F&& f);

  /// One operator of the chain and what is kept for it.
  struct link {
    ops::operator_context context;
    /// Its user counters (context.counters points here).
    std::map<std::string, int64_t> counters;
    int64_t rows_in = 0;
    int64_t rows_out = 0;
    /// It comes from a user library: calls into it are marked for the
    /// crash handler and what they throw names it.
    bool user = false;
    /// Its operator's name (the spec's `operator`).
    std::string op;
    /// Who it is in failure causes, and in crash notes.
    std::string who;
    std::string crash_note;
    /// What it receives and emits (context.input and .output point here).
    schema input;
    schema output;
    /// Its keyed state backend (null: it keeps none).
    std::unique_ptr<state::keyed_backend> backend;
    /// Its timers, in that backend (null: it keeps no keyed state).
    std::unique_ptr<ops::keyed_timers> timers;
    /// A transform and its output batch, reused (null: a source or sink).
    std::unique_ptr<ops::transform> transform;
    row_batch transform_out;
    /// Its vertex's "watermarks" (none: disabled), the event-time field's
    /// index in `output`, and the largest event time it stamped.
    watermark_spec watermarks;
    size_t time_field = 0;
    int64_t max_time = no_watermark;
  };

  /// Source (if any), transforms, sink (if any): sized once, so the
  /// contexts' pointers into the links stay valid.
  std::vector<link> links_;
  /// Attached files by name (operator_context::files points here).
  std::map<std::string, std::string> files_;
  /// A driver's link to its cluster (driver jobs only).
  std::unique_ptr<ops::driver_services> driver_;
  std::unique_ptr<ops::source> source_;
  std::unique_ptr<ops::sink> sink_;
  std::vector<output_gate> gates_;
  std::vector<bool> preaggregated_; // per input gate
  /// What arrives on input gates: rows, or partial aggregates.
  schema gate_rows_;
  schema gate_partials_;
  /// A two-input first operator: each gate's rows (empty otherwise).
  std::vector<schema> gate_rows_of_;
  /// The last operator's side outputs that gates take, by name
  /// (operator_context::side_batches points here).
  std::map<std::string, row_batch> side_batches_;
  size_t batch_records_;
  io_metrics metrics_;
  /// The link whose watermarks the chain sends (the last with
  /// "watermarks"; links_.size(): none), and the rows it stamped.
  size_t assigner_ = 0;
  int64_t stamped_rows_ = 0;
};

} // namespace weir
