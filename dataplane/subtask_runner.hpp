#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dataplane/barrier_aligner.hpp"
#include "dataplane/chain_env.hpp"
#include "dataplane/exchange_options.hpp"
#include "dataplane/input_credits.hpp"
#include "dataplane/checkpoint_storage.hpp"
#include "dataplane/input_queue.hpp"
#include "dataplane/load_meter.hpp"
#include "dataplane/operator_chain.hpp"
#include "dataplane/watermark_valve.hpp"
#include "messages/barrier.hpp"
#include "messages/deployment.hpp"
#include "messages/job_result.hpp"
#include "messages/record.hpp"
#include "messages/states.hpp"

namespace weir {

/// Everything a subtask_runner sends or schedules. The subtask actor
/// implements it with messages and timers; tests record the calls. Each call
/// happens on the runner's thread, inside one of its member functions.
class runner_port {
public:
  virtual ~runner_port() = default;

  /// Event number `seq` of input channel `channel` of consumer `consumer` of
  /// output `gate` is `batch`.
  virtual void send_batch(size_t gate, int32_t consumer, int32_t channel,
                          int64_t seq, row_batch&& batch)
    = 0;
  /// Event number `seq` of that channel is `barrier`.
  virtual void send_barrier(size_t gate, int32_t consumer, int32_t channel,
                            int64_t seq, const checkpoint_barrier& barrier)
    = 0;
  /// Event number `seq` of that channel is watermark `mark`.
  virtual void send_watermark(size_t gate, int32_t consumer, int32_t channel,
                              int64_t seq, const watermark_mark& mark)
    = 0;
  /// That channel ended after `events` numbered events.
  virtual void send_end(size_t gate, int32_t consumer, int32_t channel,
                        int64_t events)
    = 0;
  /// That channel has `waiting` events and no credit for them.
  virtual void send_backlog(size_t gate, int32_t consumer, int32_t channel,
                            int32_t waiting)
    = 0;
  /// `n` credits to the producer of input channel `channel`, for its
  /// output `port`.
  virtual void return_credit(int32_t channel, int32_t port, int32_t n) = 0;
  /// The subtask moved to state `s` (FAILED comes with the cause). After a
  /// terminal state the runner does nothing more: the subtask may end.
  virtual void report(execution_state s, const io_metrics& metrics,
                      std::string error)
    = 0;
  /// Progress counters while running.
  virtual void send_metrics(const io_metrics& metrics) = 0;
  /// Records a collect sink gathered since the last hand-over.
  virtual void hand_over(collected_table&& rows) = 0;
  /// The subtask took checkpoint `id` after aligning its inputs' barriers
  /// for `alignment_ms`; its state (by vertex: small states inline, larger
  /// ones as handles of their files in checkpoint storage).
  virtual void acknowledge(int64_t id, int64_t alignment_ms,
                           operator_states&& states) = 0;
  /// Write the deferred parts of checkpoint `id`'s snapshot off this thread
  /// (blocking I/O), then call snapshot_written or snapshot_failed.
  virtual void write_snapshot(int64_t id, chain_snapshot&& snap) = 0;
  /// Call produce() after `pause` (zero: as soon as possible).
  virtual void schedule_produce(std::chrono::microseconds pause) = 0;
  /// Call flush() after `timeout`.
  virtual void schedule_flush(std::chrono::milliseconds timeout) = 0;
  /// Call metrics_tick() after `timeout`.
  virtual void schedule_metrics(std::chrono::milliseconds timeout) = 0;
  /// Call on_timers() after `timeout` (the operators' next processing-time
  /// timer is due then).
  virtual void schedule_timers(std::chrono::milliseconds timeout) = 0;
  /// Input messages waiting to be handed to the runner (the subtask's
  /// mailbox; an approximation), for task_load::input_queue.
  virtual int32_t waiting_input() = 0;
};

/// An operator chain built before its subtask starts, or why it could not be.
struct built_chain {
  std::unique_ptr<operator_chain> chain;
  std::string error;
  /// The error is a user operator's (user_code_error): it names the
  /// operator and the subtask already.
  bool user_code = false;
};

/// Builds the operators of `d` (no I/O yet); a failure is kept as the error.
built_chain build_chain(const task_deployment& d, const chain_env& env);

/// A subtask's run loop as a plain class: it owns the operator chain, the
/// input queue, the barrier aligner and the events replayed after an
/// alignment, and sends everything through a runner_port. The subtask actor
/// feeds it its messages; one thread calls it (not thread-safe).
///
/// ```
///  created ──start()──▶ running ──all input ended──▶ ending ──outputs empty──▶ finished
///  any phase before finished ──cancel()──▶ canceled
///  any phase before finished ──open failed, an operator threw, fail()──▶ failed
/// ```
///
/// Input that arrives before start() waits in the queue (its credits with
/// it). The last three phases are terminal: after their report the runner
/// ignores every call.
class subtask_runner {
public:
  /// The lifecycle of the subtask (one phase at a time).
  enum class phase : uint8_t {
    created,  ///< operators open (or failed to); waiting for the wiring
    running,  ///< processing input, or producing from the source
    ending,   ///< all input ended; finishing once the outputs are empty
    finished,
    canceled,
    failed,
  };

  /// Progress counters go out at most this often.
  static constexpr auto metrics_interval = std::chrono::milliseconds{200};
  /// Partly filled batches leave after at most this long (Flink's
  /// execution.buffer-timeout).
  static constexpr auto buffer_timeout = std::chrono::milliseconds{50};

  /// `clock`: what the load is measured with (tests script it); `opts`:
  /// the input gates' credits.
  subtask_runner(const task_deployment& d, runner_port& port,
                 load_meter::clock_fn clock = load_meter::clock::now,
                 const exchange_options& opts = {});
  ~subtask_runner();

  /// Opens the operators of `built`, restoring `restore`; reports
  /// INITIALIZING, or FAILED (a chain that could not be built or opened).
  void open(built_chain built, const operator_states& restore);

  /// The consumers are wired: reports RUNNING and starts processing.
  void start();

  /// Input from a producer (see subtask_actor).
  void on_batch(int32_t channel, int32_t port, int64_t seq, row_batch&& b);
  void on_barrier(int32_t channel, int32_t port, int64_t seq,
                  const checkpoint_barrier& b);
  void on_watermark(int32_t channel, int32_t port, int64_t seq,
                    const watermark_mark& m);
  void on_end(int32_t channel, int64_t events);
  /// The producer of `channel` has `waiting` events without credit.
  void on_backlog(int32_t channel, int32_t port, int32_t waiting);

  /// Consumer `consumer` of output `gate` granted `n` more events.
  void on_credit(int32_t gate, int32_t consumer, int32_t n);

  /// The JobMaster triggers a checkpoint (sources only; others ignore it).
  void trigger(const checkpoint_barrier& b);
  /// `weir stop` (sources only): takes the barrier's savepoint as trigger()
  /// does, then produces nothing more until end_input() or resume().
  void stop_at(const checkpoint_barrier& b);
  /// The stop's savepoint is written (sources only): the input ends here,
  /// so the subtask and those downstream finish.
  void end_input();
  /// The stop failed (sources only): producing goes on.
  void resume();
  /// The deferred parts of checkpoint `id` were written: acknowledge it.
  void snapshot_written(int64_t id, operator_states&& states);
  /// Writing checkpoint `id` failed: the subtask fails.
  void snapshot_failed(int64_t id, const std::string& error);
  /// Checkpoint `id` completed everywhere: sinks publish its output.
  void commit(int64_t id);
  /// The newest checkpoint this subtask took, aligns or was told of: a
  /// JobMaster that adopts it after a failover numbers its next one after
  /// it.
  int64_t newest_checkpoint() const;
  /// Its JobMaster is lost: until a successor adopts it (attach), the end
  /// of its input waits, so that no sink publishes output that no
  /// checkpoint covers while nobody could restart the job consistently.
  void detach() { detached_ = true; }
  /// Adopted by a new JobMaster: an end of input that waited happens now.
  void attach();
  /// Whether its sources are halted by a `weir stop` whose JobMaster has
  /// not told them to finish or resume yet.
  bool halted() const { return halted_; }

  /// Scheduled by schedule_produce: the source produces its next batch.
  void produce();
  /// Scheduled by schedule_flush: partly filled batches leave.
  void flush();
  /// Scheduled by schedule_metrics: a subtask that went quiet still
  /// reports its load (its rates fall to idle or backpressured).
  void metrics_tick();
  /// Scheduled by schedule_timers: the operators' processing-time timers
  /// due by now fire.
  void on_timers();

  /// Stops and reports CANCELED.
  void cancel();
  /// Stops and reports FAILED with `what` (e.g. a lost peer).
  void fail(const std::string& what);

  phase current_phase() const { return phase_; }
  /// Finished, canceled or failed: the runner does nothing more.
  bool terminal() const { return phase_ >= phase::finished; }

private:
  /// Numbered input event `seq` of its channel arrived: queued, then
  /// processed in channel order.
  void on_event(int64_t seq, input_event&& ev);
  void pump();
  void dispatch(input_event& ev);
  void process_batch(input_event& ev);
  void process_barrier(const input_event& ev);
  void process_end(int32_t channel);
  void process_watermark(input_event& ev);
  /// The input watermark changed (valve_change): the chain fires what it
  /// completes, and the change goes out unless the chain makes its own.
  void apply(const valve_change& change);
  /// Sends the chain's own watermark when it advanced and the interval
  /// (pipeline.auto-watermark-interval) has passed since the last one;
  /// `end`: the input ended, end_watermark goes out now. Also notices an
  /// idle assigner (no row for watermarks.idle-timeout) and one that is
  /// active again.
  void generate_watermark(bool end = false);
  void take_checkpoint(const checkpoint_barrier& b);
  void aligned(int64_t id);
  /// What the alignment held is processed next: ahead of what waits for
  /// replay (an abandoned alignment's, which precedes all of it), or after.
  void release_held(bool ahead);
  void end_of_input();
  void try_finish();
  void drain();
  void schedule_produce();
  void schedule_flush();
  void hand_over_collected();
  /// Runs handler `f` timed as busy (load_meter), then reports the
  /// metrics when they are due.
  template <class F>
  void metered(F&& f);
  void after_handler();
  /// Asks for on_timers() when the chain's earliest processing-time timer
  /// is due, unless one is asked for by then already.
  void schedule_timers();
  void send_metrics();
  io_metrics current_metrics();
  void release_owed_credits();
  /// Sends `grants`, or keeps them while the outputs are backlogged
  /// (unless `now`: a barrier's credit never waits).
  void give(std::vector<input_credits::grant>& grants, bool now = false);
  /// The credit of consumed event `ev` goes back (input_credits::consume).
  void give_back(const input_event& ev, bool now = false);
  void report(execution_state s, std::string error = {});
  bool processing() const {
    return phase_ == phase::running || phase_ == phase::ending;
  }

  /// Runs `f`, turning an exception into a FAILED report.
  template <class F>
  void guarded(F&& f);
  /// Stops and reports FAILED with `cause` as it is.
  void fail_with_cause(std::string cause);
  /// The failure cause for `e`: "task (i/n): what", or a user operator's
  /// message as it is.
  std::string cause_of(const std::exception& e) const;

  runner_port& port_;
  std::string name_; ///< "task (i/n)", for failure causes
  std::vector<int32_t> gate_of_channel_;
  std::unique_ptr<operator_chain> chain_;
  input_queue inputs_;
  input_credits credits_;
  barrier_aligner aligner_;
  /// Events that waited for a barrier alignment, processed before the queue.
  std::deque<input_event> replay_;
  /// The kind of the checkpoint being aligned.
  checkpoint_kind pending_kind_ = checkpoint_kind::checkpoint;
  bool pending_suspend_ = false;
  /// The last barrier was a suspending stop's (checkpoint_barrier::suspend)
  /// and nothing came after it: the end of input that follows stops the
  /// job where it is, without the final watermark or finishing operators.
  bool suspended_ = false;
  /// Where large checkpoint state is written (the acknowledgement carries
  /// its handle).
  checkpoint_storage storage_;
  phase phase_ = phase::created;
  /// A stop halted the source at its savepoint's barrier.
  bool halted_ = false;
  /// Detached from a lost JobMaster, and whether its end of input waits.
  bool detached_ = false;
  bool end_deferred_ = false;
  /// Timers scheduled through the port and not fired yet.
  bool produce_pending_ = false;
  bool flush_pending_ = false;
  bool tick_pending_ = false;
  /// The processing time (ms since 1970) on_timers() is asked for (none:
  /// not asked).
  std::optional<int64_t> timers_at_;
  /// A handler ran since the last metrics tick.
  bool active_ = false;
  load_meter::clock_fn clock_;
  load_meter meter_;
  /// When the pending alignment's first barrier arrived, and the last
  /// alignment: its checkpoint and how long it took (ms).
  load_meter::clock::time_point alignment_start_{};
  int64_t aligned_id_ = 0;
  /// The newest checkpoint the JobMaster confirmed: an older one that fails
  /// to be written was subsumed by it.
  int64_t committed_ = 0;
  /// The newest checkpoint this subtask acknowledged, and took.
  int64_t acknowledged_ = 0;
  int64_t taken_ = 0;
  int64_t aligned_ms_ = 0;
  /// How long checkpoint `id` waited for its alignment (0: none).
  int64_t alignment_of(int64_t id) const {
    return id == aligned_id_ ? aligned_ms_ : 0;
  }
  /// The input watermark, and whether any input channel sent one (a job
  /// without event time sends none at all).
  watermark_valve valve_;
  bool marks_seen_ = false;
  /// The chain's own watermark: the last one sent and when, whether a
  /// newer one waits for the interval, and its idleness (the rows it had
  /// stamped when last looked at, since when that count stands).
  int64_t generated_sent_ = no_watermark;
  load_meter::clock::time_point generated_at_{};
  bool generated_pending_ = false;
  bool generated_idle_ = false;
  int64_t stamped_seen_ = 0;
  load_meter::clock::time_point stamped_since_{};
  /// The last watermark the outputs got (currentOutputWatermark).
  int64_t output_watermark_ = no_watermark;
};

} // namespace weir
