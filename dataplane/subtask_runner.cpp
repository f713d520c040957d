#include "dataplane/subtask_runner.hpp"

#include <algorithm>
#include <chrono>
#include <exception>
#include <iterator>
#include <utility>

#include <fmt/format.h>

#include "dataplane/checkpoint_kind.hpp"
#include "dataplane/subtask_runner_inl.hpp"

namespace weir {

namespace {

/// Processing time, as operators' timers see it (ms since 1970).
int64_t system_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch())
    .count();
}

/// The input gate of each input channel (channels are numbered across the
/// gates, in deployment order).
std::vector<int32_t> gates_of_channels(const task_deployment& d) {
  std::vector<int32_t> out;
  for (size_t g = 0; g < d.inputs.size(); ++g)
    out.insert(out.end(), static_cast<size_t>(d.inputs[g].channels),
               static_cast<int32_t>(g));
  return out;
}

/// Each input gate's credits: exclusive per channel unless the gate is
/// too wide for them, and its floating ones.
std::vector<input_credits::gate> credit_gates(const task_deployment& d,
                                              const exchange_options& opts) {
  std::vector<input_credits::gate> out;
  for (auto& in : d.inputs)
    out.push_back(input_credits::gate{in.channels,
                                      opts.exclusive_for(in.channels),
                                      opts.floating_per_gate,
                                      opts.initial_credit});
  return out;
}

} // namespace

built_chain build_chain(const task_deployment& d, const chain_env& env) {
  built_chain result;
  try {
    result.chain = std::make_unique<operator_chain>(d, env);
  } catch (const user_code_error& e) {
    result.error = e.what();
    result.user_code = true;
  } catch (const std::exception& e) {
    result.error = e.what();
  }
  return result;
}

subtask_runner::subtask_runner(const task_deployment& d, runner_port& port,
                               load_meter::clock_fn clock,
                               const exchange_options& opts)
  : port_(port),
    name_(fmt::format("{} ({}/{})", d.task_name, d.subtask_index + 1,
                      d.parallelism)),
    gate_of_channel_(gates_of_channels(d)),
    inputs_(gate_of_channel_.size()),
    credits_(credit_gates(d, opts)),
    aligner_(gate_of_channel_.size()),
    storage_(d.backend.checkpoint_dir,
             fmt::format("{}-{}", d.subtask_index,
                         d.attempt.to_string().substr(0, 8))),
    clock_(clock),
    meter_(std::move(clock)),
    valve_(gate_of_channel_.size()) {
}

subtask_runner::~subtask_runner() = default;

// -- lifecycle ----------------------------------------------------------------

void subtask_runner::open(built_chain built, const operator_states& restore) {
  try {
    if (!built.chain && built.user_code)
      throw user_code_error(built.error);
    if (!built.chain)
      throw ops::operator_error(built.error);
    chain_ = std::move(built.chain);
    chain_->open(restore);
    report(execution_state::initializing);
  } catch (const std::exception& e) {
    phase_ = phase::failed;
    report(execution_state::failed, cause_of(e));
  }
}

void subtask_runner::start() {
  if (phase_ != phase::created)
    return;
  phase_ = phase::running;
  meter_.start();
  stamped_since_ = clock_(); // an assigner's idle timeout counts from here
  report(execution_state::running);
  metered([&] {
    guarded([&] {
      if (chain_->has_source())
        schedule_produce();
      else if (inputs_.open_channels() == 0)
        end_of_input(); // no inputs at all
      pump();           // what arrived before the start
      drain();
      try_finish();
    });
  });
}

void subtask_runner::cancel() {
  if (terminal())
    return;
  phase_ = phase::canceled;
  if (chain_)
    chain_->abort();
  report(execution_state::canceled);
}

void subtask_runner::fail(const std::string& what) {
  fail_with_cause(fmt::format("{}: {}", name_, what));
}

void subtask_runner::fail_with_cause(std::string cause) {
  if (terminal())
    return;
  phase_ = phase::failed;
  if (chain_)
    chain_->abort();
  report(execution_state::failed, std::move(cause));
}

std::string subtask_runner::cause_of(const std::exception& e) const {
  // A user operator's failure names its vertex and subtask itself.
  if (dynamic_cast<const user_code_error*>(&e) != nullptr)
    return e.what();
  return fmt::format("{}: {}", name_, e.what());
}

void subtask_runner::report(execution_state s, std::string error) {
  port_.report(s, current_metrics(), std::move(error));
}

/// Sends the metrics when due, and keeps a tick coming while the subtask is
/// active so that the report after it goes quiet is not missed.
void subtask_runner::after_handler() {
  if (!processing())
    return;
  active_ = true;
  if (meter_.sample_due(metrics_interval))
    send_metrics();
  if (!tick_pending_) {
    tick_pending_ = true;
    port_.schedule_metrics(metrics_interval);
  }
  schedule_timers();
}

void subtask_runner::schedule_timers() {
  if (phase_ != phase::running || suspended_)
    return; // an ending chain fires its timers as it finishes
  std::optional<int64_t> next;
  guarded([&] { next = chain_->next_processing_timer(); });
  if (!next || (timers_at_ && *timers_at_ <= *next))
    return;
  timers_at_ = next;
  // Saturating, and at most a day: a timer at the end of time (a "never"
  // sentinel) must not overflow the scheduler's clock.
  constexpr int64_t day_ms = 24 * 3600 * 1000;
  auto now = system_ms();
  auto wait = *next <= now ? 0 : (*next - now > day_ms ? day_ms : *next - now);
  port_.schedule_timers(std::chrono::milliseconds{wait});
}

void subtask_runner::on_timers() {
  timers_at_.reset();
  if (phase_ != phase::running || suspended_)
    return; // after a stop's savepoint nothing more leaves (until a batch)
  metered([&] {
    guarded([&] { chain_->on_processing_time(system_ms()); });
    hand_over_collected();
    drain();
    schedule_flush();
  });
}

void subtask_runner::metrics_tick() {
  tick_pending_ = false;
  if (!processing())
    return;
  // An assigner with an idle timeout needs the ticks to notice idleness.
  bool watch_idle = chain_->makes_watermarks()
                    && chain_->watermarks().idle_timeout_ms > 0
                    && !generated_idle_;
  if (watch_idle)
    generate_watermark();
  if (!active_ && !watch_idle) {
    send_metrics(); // quiet for a whole interval: the last report until work
    return;
  }
  active_ = false;
  meter_.enter();
  meter_.leave(chain_->backlogged());
  if (meter_.sample_due(metrics_interval))
    send_metrics();
  tick_pending_ = true;
  port_.schedule_metrics(metrics_interval);
}

/// All input has ended (the source is exhausted, or every channel ended).
void subtask_runner::end_of_input() {
  if (phase_ != phase::running)
    return;
  if (detached_) {
    end_deferred_ = true;
    return;
  }
  phase_ = phase::ending;
  if (suspended_) {
    // A stop without --drain: windows and timers wait in the savepoint.
    chain_->finish(false);
  } else {
    generate_watermark(true); // a chain with its own watermarks ends event time
    chain_->finish();
  }
  hand_over_collected();
  drain();
  try_finish();
}

void subtask_runner::attach() {
  detached_ = false;
  if (!std::exchange(end_deferred_, false))
    return;
  metered([&] { guarded([&] { end_of_input(); }); });
}

/// Once every batch has left: tells the consumers the channels ended and
/// reports FINISHED.
void subtask_runner::try_finish() {
  if (phase_ != phase::ending)
    return;
  auto& gates = chain_->gates();
  for (auto& g : gates)
    if (!g.empty())
      return;
  phase_ = phase::finished;
  for (size_t g = 0; g < gates.size(); ++g)
    for (auto t : gates[g].targets())
      port_.send_end(g, t, gates[g].channel(), gates[g].sent(t));
  hand_over_collected();
  report(execution_state::finished);
}

// -- input --------------------------------------------------------------------

void subtask_runner::on_event(int64_t seq, input_event&& ev) {
  if (terminal())
    return;
  metered([&] {
    inputs_.push(seq, std::move(ev));
    pump();
  });
}

void subtask_runner::on_batch(int32_t channel, int32_t port, int64_t seq,
                              row_batch&& b) {
  on_event(seq, input_event{channel, port, std::move(b)});
}

void subtask_runner::on_barrier(int32_t channel, int32_t port, int64_t seq,
                                const checkpoint_barrier& b) {
  on_event(seq, input_event{channel, port, b});
}

void subtask_runner::on_backlog(int32_t channel, int32_t port,
                                int32_t waiting) {
  if (terminal())
    return;
  metered([&] {
    std::vector<input_credits::grant> grants;
    credits_.on_backlog(channel, port, waiting, grants);
    give(grants);
  });
}

void subtask_runner::on_watermark(int32_t channel, int32_t port, int64_t seq,
                                  const watermark_mark& m) {
  on_event(seq, input_event{channel, port, m});
}

void subtask_runner::on_end(int32_t channel, int64_t events) {
  if (terminal())
    return;
  metered([&] {
    inputs_.push_end(channel, events);
    pump();
  });
}

/// Processes queued inputs in order; events of a channel that is past a
/// checkpoint barrier wait for the alignment.
void subtask_runner::pump() {
  while (processing() && (!replay_.empty() || !inputs_.empty())) {
    input_event ev;
    if (!replay_.empty()) {
      ev = std::move(replay_.front());
      replay_.pop_front();
    } else {
      ev = inputs_.pop();
    }
    if (aligner_.blocked(ev.channel)) {
      // Its lent credit goes back now: the channels still owing their
      // barrier must get credit (input_credits).
      std::vector<input_credits::grant> grants;
      ev.credit_returned = credits_.hold(ev.channel, grants);
      give(grants);
      aligner_.hold(std::move(ev));
      continue;
    }
    guarded([&] { dispatch(ev); });
  }
}

void subtask_runner::dispatch(input_event& ev) {
  if (std::holds_alternative<row_batch>(ev.body))
    process_batch(ev);
  else if (std::holds_alternative<checkpoint_barrier>(ev.body))
    process_barrier(ev);
  else if (std::holds_alternative<watermark_mark>(ev.body))
    process_watermark(ev);
  else
    process_end(ev.channel);
}

void subtask_runner::process_batch(input_event& ev) {
  suspended_ = false; // a stop that failed: the job goes on
  auto& records = std::get<row_batch>(ev.body);
  meter_.batch_in(records.byte_size());
  chain_->process(static_cast<size_t>(gate_of_channel_[ev.channel]), records);
  generate_watermark();
  hand_over_collected();
  drain();
  schedule_flush();
  // The credit goes back once the batch is processed, unless the outputs are
  // backlogged: then this subtask holds its producers back too.
  give_back(ev);
}

void subtask_runner::give_back(const input_event& ev, bool now) {
  if (ev.credit_returned)
    return;
  std::vector<input_credits::grant> grants;
  if (credits_.consume(ev.channel, grants))
    grants.push_back(input_credits::grant{ev.channel, ev.port, 1});
  give(grants, now);
}

void subtask_runner::give(std::vector<input_credits::grant>& grants,
                          bool now) {
  bool hold = !now && chain_ && chain_->backlogged();
  for (auto& g : grants) {
    if (hold)
      inputs_.withhold(owed_credit{g.channel, g.port, g.n});
    else
      port_.return_credit(g.channel, g.port, g.n);
  }
}

void subtask_runner::process_barrier(const input_event& ev) {
  give_back(ev, true);
  auto& b = std::get<checkpoint_barrier>(ev.body);
  if (auto pending = aligner_.pending(); pending && b.id > *pending) {
    // A newer checkpoint abandons the pending one (its JobMaster died or
    // it expired): what its alignment held comes before anything else,
    // so that the newer checkpoint's cut includes it.
    release_held(true);
  }
  pending_kind_ = b.kind;
  pending_suspend_ = b.suspend;
  if (aligner_.pending() != b.id)
    alignment_start_ = clock_(); // its first barrier
  if (aligner_.on_barrier(ev.channel, b.id))
    aligned(b.id);
}

void subtask_runner::process_end(int32_t channel) {
  // Recorded even with no alignment pending: a later barrier must not wait
  // for a channel that has ended.
  auto id = aligner_.pending();
  if (aligner_.on_end(channel) && id)
    aligned(*id);
  // An ended channel holds the watermark back no longer (the last one:
  // end_watermark, before the chain finishes).
  auto change = valve_.on_end(channel);
  if (marks_seen_ && !suspended_) // a suspended job's event time stays
    apply(change);
  if (inputs_.end_channel(channel))
    end_of_input();
}

void subtask_runner::process_watermark(input_event& ev) {
  marks_seen_ = true;
  apply(valve_.on_mark(ev.channel, std::get<watermark_mark>(ev.body)));
  give_back(ev); // as a batch's: after it was processed
}

void subtask_runner::apply(const valve_change& change) {
  if (suspended_)
    return; // a stop's savepoint was taken: event time stays
  if (change.advanced)
    chain_->on_input_watermark(*change.advanced);
  // A chain that makes its own watermarks sends those instead.
  if (!chain_->makes_watermarks() && (change.advanced || change.idle)) {
    chain_->emit_mark(watermark_mark{valve_.current(), valve_.idle()});
    output_watermark_ = valve_.current();
  }
  hand_over_collected();
  drain();
  schedule_flush();
}

void subtask_runner::generate_watermark(bool end) {
  if (!chain_->makes_watermarks() || suspended_)
    return; // after a stop's savepoint its event time stays where it was
  auto now = clock_();
  auto& spec = chain_->watermarks();
  if (chain_->stamped_rows() != stamped_seen_) {
    stamped_seen_ = chain_->stamped_rows();
    stamped_since_ = now;
    if (generated_idle_) { // rows again: active from here on
      generated_idle_ = false;
      chain_->emit_mark(watermark_mark{generated_sent_, false});
    }
  } else if (spec.idle_timeout_ms > 0 && !generated_idle_ && !end
             && now - stamped_since_
                  >= std::chrono::milliseconds{spec.idle_timeout_ms}) {
    generated_idle_ = true;
    chain_->emit_mark(watermark_mark{generated_sent_, true});
  }
  auto wm = end ? end_watermark : chain_->generated_watermark();
  if (wm <= generated_sent_)
    return;
  if (!end && spec.interval_ms > 0
      && now - generated_at_ < std::chrono::milliseconds{spec.interval_ms}) {
    generated_pending_ = true; // flush() sends it once the interval passed
    schedule_flush();
    return;
  }
  generated_pending_ = false;
  generated_sent_ = wm;
  generated_at_ = now;
  output_watermark_ = wm;
  chain_->on_generated_watermark(wm);
}

// -- checkpoints --------------------------------------------------------------

// -- output -------------------------------------------------------------------

void subtask_runner::hand_over_collected() {
  auto* sink = chain_->sink();
  if (sink == nullptr)
    return;
  auto* table = sink->collected();
  if (table == nullptr || table->rows.empty())
    return;
  collected_table part{table->sink, table->fields, std::move(table->rows)};
  table->rows.reset(table->fields);
  port_.hand_over(std::move(part));
}

void subtask_runner::send_metrics() {
  port_.send_metrics(current_metrics());
}

/// The chain's records and, once running, the subtask's load up to now.
io_metrics subtask_runner::current_metrics() {
  if (!chain_)
    return {};
  auto m = chain_->metrics();
  if (!meter_.started())
    return m;
  int32_t output = 0;
  for (auto& g : chain_->gates())
    output += g.waiting();
  int32_t input = static_cast<int32_t>(inputs_.queued() + replay_.size()
                                       + aligner_.held());
  if (!gate_of_channel_.empty())
    input += port_.waiting_input();
  m.load = meter_.sample(m.records_in, m.records_out, input, output);
  m.load.input_watermark = valve_.current();
  m.load.output_watermark = output_watermark_;
  return m;
}

} // namespace weir
