#include "actors/task_executor/subtask.hpp"

#include <chrono>
#include <deque>
#include <set>
#include <exception>
#include <memory>

#include <caf/actor_system.hpp>
#include <caf/blocking_actor.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <fmt/format.h>

#include "actors/task_executor/driver_client.hpp"
#include "dataplane/barrier_aligner.hpp"
#include "dataplane/input_queue.hpp"
#include "dataplane/operator_chain.hpp"

namespace weir {

namespace {

using namespace std::chrono_literals;

/// Progress counters go to the JobMaster at most this often.
constexpr auto metrics_interval = 200ms;
/// Partly filled batches leave after at most this long (Flink's
/// execution.buffer-timeout).
constexpr auto buffer_timeout = 50ms;

/// An operator chain built before the subtask is spawned, or why not.
struct built_chain {
  std::unique_ptr<operator_chain> chain;
  std::string error;
};

struct subtask_state {
  task_deployment d;
  job_master_actor jm;
  std::unique_ptr<operator_chain> chain;
  std::vector<std::vector<subtask_actor>> consumers;
  /// The producer of each input channel, once it sent something (credits go
  /// back there).
  std::vector<caf::strong_actor_ptr> producers;
  std::unique_ptr<input_queue> inputs;
  std::unique_ptr<barrier_aligner> aligner;
  /// Events that waited for a barrier alignment, processed before the queue.
  std::deque<input_event> replay;
  /// The snapshot kind of the checkpoint being aligned.
  int8_t pending_kind = 0;
  /// Peers (consumers, and producers once they sent something) watched so
  /// that losing one fails this subtask instead of stalling it.
  std::set<caf::actor_addr> watched;
  bool started = false;
  bool source_done = false;
  bool input_done = false;
  bool finished = false;
  bool tick_pending = false;
  bool flush_pending = false;
  /// A deliberately slow sink is "processing" its last batch.
  bool sink_busy = false;
  std::chrono::steady_clock::time_point last_metrics;
  static inline const char* name = "subtask";
};

using self_ptr = subtask_actor::stateful_pointer<subtask_state>;

void report(self_ptr self, execution_state s, std::string error = {}) {
  auto& st = self->state;
  auto metrics = st.chain ? st.chain->metrics() : io_metrics{};
  self->send(st.jm, update_atom_v, st.d.attempt, s, metrics, std::move(error));
}

std::string describe_failure(const subtask_state& st, const std::string& what) {
  return fmt::format("{} ({}/{}): {}", st.d.task_name, st.d.subtask_index + 1,
                     st.d.parallelism, what);
}

void fail(self_ptr self, const std::string& what) {
  auto& st = self->state;
  if (st.finished)
    return;
  st.finished = true;
  if (st.chain)
    st.chain->abort();
  report(self, execution_state::failed, describe_failure(st, what));
  self->quit();
}

/// Runs `f`, turning an exception into a FAILED report.
template <class F>
void guarded(self_ptr self, F f) {
  try {
    f();
  } catch (const std::exception& e) {
    fail(self, e.what());
  }
}

void send_metrics(self_ptr self) {
  auto& st = self->state;
  auto now = std::chrono::steady_clock::now();
  if (now - st.last_metrics < metrics_interval)
    return;
  st.last_metrics = now;
  self->send(st.jm, metrics_atom_v, st.d.attempt, st.chain->metrics());
}

void hand_over_collected(self_ptr self) {
  auto& st = self->state;
  auto* sink = st.chain->sink();
  if (sink == nullptr)
    return;
  auto* rows = sink->collected();
  if (rows == nullptr || rows->empty())
    return;
  self->send(st.jm, collect_atom_v, st.d.attempt, record_batch{std::move(*rows)});
  rows->clear();
}

/// Sends every batch that has credit.
void drain(self_ptr self) {
  auto& st = self->state;
  if (!st.started)
    return;
  auto& gates = st.chain->gates();
  for (size_t g = 0; g < gates.size(); ++g) {
    auto port = static_cast<int32_t>(g);
    gates[g].drain([&](int32_t consumer, int32_t channel, int64_t seq,
                       record_batch&& b) {
      self->send(st.consumers[g][static_cast<size_t>(consumer)], data_atom_v,
                 channel, port, seq, std::move(b));
    });
  }
}

void schedule_tick(self_ptr self) {
  auto& st = self->state;
  if (!st.chain->has_source() || st.tick_pending || st.source_done
      || !st.started || st.finished)
    return;
  st.tick_pending = true;
  auto pause = st.chain->source()->pause();
  if (pause.count() > 0)
    self->delayed_send(self, pause, tick_atom_v);
  else
    self->send(self, tick_atom_v);
}

void schedule_flush(self_ptr self) {
  auto& st = self->state;
  if (st.flush_pending || st.finished)
    return;
  for (auto& g : st.chain->gates()) {
    if (g.has_open_data()) {
      st.flush_pending = true;
      self->delayed_send(self, buffer_timeout, flush_atom_v);
      return;
    }
  }
}

/// Once all input has ended and every batch has left: tell the consumers the
/// channels ended and report FINISHED.
void try_finish(self_ptr self) {
  auto& st = self->state;
  if (st.finished || !st.started || !st.input_done)
    return;
  for (auto& g : st.chain->gates())
    if (!g.empty())
      return;
  st.finished = true;
  auto& gates = st.chain->gates();
  for (size_t g = 0; g < gates.size(); ++g)
    for (auto t : gates[g].targets())
      self->send(st.consumers[g][static_cast<size_t>(t)], end_atom_v,
                 gates[g].channel(), gates[g].sent(t));
  hand_over_collected(self);
  report(self, execution_state::finished);
  self->quit();
}

void end_of_input(self_ptr self) {
  auto& st = self->state;
  if (st.input_done)
    return;
  st.input_done = true;
  st.chain->finish();
  hand_over_collected(self);
  drain(self);
  try_finish(self);
}

/// Gives the producer of `c.channel` one more batch of credit.
void return_credit(self_ptr self, const owed_credit& c) {
  auto& st = self->state;
  auto ch = static_cast<size_t>(c.channel);
  if (ch < st.producers.size() && st.producers[ch])
    self->send(caf::actor_cast<subtask_actor>(st.producers[ch]), credit_atom_v,
               c.port, st.d.subtask_index, int32_t{1});
}

/// Credits withheld while the outputs were backlogged go out once they drain.
void release_owed_credits(self_ptr self) {
  auto& st = self->state;
  if (st.chain->backlogged())
    return;
  for (auto& c : st.inputs->release())
    return_credit(self, c);
}

int32_t channel_gate(const task_deployment& d, int32_t channel) {
  int32_t base = 0;
  for (size_t g = 0; g < d.inputs.size(); ++g) {
    base += d.inputs[g].channels;
    if (channel < base)
      return static_cast<int32_t>(g);
  }
  return 0;
}

void on_data(self_ptr self, input_event& in) {
  auto& st = self->state;
  auto gate = static_cast<size_t>(channel_gate(st.d, in.channel));
  st.chain->process(gate, in.batch.records);
  hand_over_collected(self);
  drain(self);
  schedule_flush(self);
  send_metrics(self);
  // The credit goes back once the batch is processed, unless the outputs are
  // backlogged: then this subtask holds its producers back too.
  if (st.chain->backlogged())
    st.inputs->withhold(owed_credit{in.channel, in.port});
  else
    return_credit(self, owed_credit{in.channel, in.port});
  auto* sink = st.chain->sink();
  if (sink != nullptr && sink->delay_per_batch().count() > 0) {
    st.sink_busy = true;
    self->delayed_send(self, sink->delay_per_batch(), tick_atom_v);
  }
}

/// Writes the deferred parts of a snapshot on a thread of its own (blocking
/// I/O) and hands the complete states back to the subtask.
void write_snapshot_async(self_ptr self, int64_t id, chain_snapshot snap) {
  auto subtask = caf::actor_cast<subtask_actor>(self);
  auto shared = std::make_shared<chain_snapshot>(std::move(snap));
  self->system().spawn([subtask, id, shared](caf::blocking_actor* writer) {
    try {
      auto states = std::move(shared->ready);
      for (auto& [vertex, finish] : shared->deferred)
        states[vertex] = finish();
      // What the snapshot held (frozen tables) is released before the
      // subtask hears that it was written.
      shared->deferred.clear();
      writer->send(subtask, checkpoint_atom_v, id, std::move(states));
    } catch (const std::exception& e) {
      writer->send(subtask, checkpoint_atom_v, id, std::string{e.what()});
    }
  });
}

/// Takes checkpoint `id`: snapshots the operators, sends the barrier after
/// everything emitted so far, and acknowledges to the JobMaster (once the
/// state is written, when that is left to another thread).
void take_checkpoint(self_ptr self, int64_t id, int8_t kind) {
  auto& st = self->state;
  st.chain->prepare_commit(id);
  auto snap = st.chain->snapshot(id, static_cast<state::snapshot_kind>(kind));
  for (auto& g : st.chain->gates())
    g.emit_barrier(id, kind);
  drain(self);
  if (snap.deferred.empty())
    self->send(st.jm, checkpoint_atom_v, st.d.attempt, id,
               std::move(snap.ready));
  else
    write_snapshot_async(self, id, std::move(snap));
}

/// The alignment of the pending checkpoint completed: snapshot, then
/// process what waited for it.
void on_aligned(self_ptr self, int64_t id) {
  auto& st = self->state;
  take_checkpoint(self, id, st.pending_kind);
  auto held = st.aligner->release();
  st.replay.insert(st.replay.end(), std::make_move_iterator(held.begin()),
                   std::make_move_iterator(held.end()));
}

void on_barrier(self_ptr self, input_event& in) {
  auto& st = self->state;
  return_credit(self, owed_credit{in.channel, in.port});
  auto id = in.batch.barrier;
  st.pending_kind = in.batch.barrier_kind;
  if (st.aligner->on_barrier(in.channel, id))
    on_aligned(self, id);
}

void on_end(self_ptr self, int32_t channel) {
  auto& st = self->state;
  // Recorded even with no alignment pending: a later barrier must not wait
  // for a channel that has ended.
  auto id = st.aligner->pending();
  if (st.aligner->on_end(channel) && id)
    on_aligned(self, *id);
  if (st.inputs->end_channel(channel))
    end_of_input(self);
}

/// Processes queued inputs in order while the sink is not busy; events of a
/// channel that is past a checkpoint barrier wait for the alignment.
void pump(self_ptr self) {
  auto& st = self->state;
  while ((!st.replay.empty() || !st.inputs->empty()) && !st.sink_busy
         && !st.finished) {
    input_event in;
    if (!st.replay.empty()) {
      in = std::move(st.replay.front());
      st.replay.pop_front();
    } else {
      in = st.inputs->pop();
    }
    if (st.aligner->blocked(in.channel)) {
      st.aligner->hold(std::move(in));
      continue;
    }
    guarded(self, [&] {
      if (in.end)
        on_end(self, in.channel);
      else if (in.batch.barrier >= 0)
        on_barrier(self, in);
      else
        on_data(self, in);
    });
  }
}

subtask_actor::behavior_type subtask_impl(self_ptr self, task_deployment d,
                                          job_master_actor jm,
                                          std::shared_ptr<built_chain> built) {
  auto& st = self->state;
  st.d = std::move(d);
  st.jm = std::move(jm);
  size_t channels = 0;
  for (auto& in : st.d.inputs)
    channels += static_cast<size_t>(in.channels);
  st.inputs = std::make_unique<input_queue>(channels);
  st.aligner = std::make_unique<barrier_aligner>(channels);
  st.producers.resize(channels);
  try {
    if (!built->chain)
      throw ops::operator_error(built->error);
    st.chain = std::move(built->chain);
    st.chain->open(st.d.restore);
    report(self, execution_state::initializing);
    // A peer that ended (finished, canceled, failed: it reports that
    // itself) is fine. A peer that became unreachable (its process killed,
    // the link between two workers cut) takes this subtask down too, so the
    // JobMaster fails or restarts the job instead of waiting forever. (CAF
    // reports remote peers that simply ended with an "unknown" reason.)
    self->set_down_handler([=](caf::down_msg& dm) {
      if (dm.reason == caf::exit_reason::remote_link_unreachable)
        fail(self, "lost the connection to a peer subtask");
    });
  } catch (const std::exception& e) {
    st.finished = true;
    report(self, execution_state::failed, describe_failure(st, e.what()));
    self->quit(); // the behavior below never runs
  }
  return {
    [=](start_atom, subtask_wiring& w) {
      auto& st = self->state;
      st.consumers = std::move(w.consumers);
      for (auto& list : st.consumers)
        for (auto& c : list)
          if (st.watched.insert(c.address()).second)
            self->monitor(c);
      st.started = true;
      report(self, execution_state::running);
      guarded(self, [&] {
        if (st.chain->has_source())
          schedule_tick(self);
        else if (st.inputs->open_channels() == 0)
          end_of_input(self); // no inputs at all (or all ended before start)
        drain(self);
        try_finish(self);
      });
    },
    [=](data_atom, int32_t channel, int32_t port, int64_t seq,
        record_batch& b) {
      auto& st = self->state;
      auto producer = self->current_sender();
      if (producer && st.watched.insert(caf::actor_cast<caf::actor_addr>(producer)).second)
        self->monitor(producer);
      auto ch = static_cast<size_t>(channel);
      if (ch < st.producers.size() && !st.producers[ch])
        st.producers[ch] = std::move(producer);
      st.inputs->push_batch(seq, input_event{channel, port, std::move(b), false});
      pump(self);
    },
    [=](end_atom, int32_t channel, int64_t batches) {
      self->state.inputs->push_end(channel, batches);
      pump(self);
    },
    [=](credit_atom, int32_t port, int32_t consumer, int32_t n) {
      auto& st = self->state;
      auto g = static_cast<size_t>(port);
      if (g >= st.chain->gates().size())
        return;
      st.chain->gates()[g].add_credit(consumer, n);
      drain(self);
      release_owed_credits(self);
      if (!st.chain->backlogged())
        schedule_tick(self);
      try_finish(self);
    },
    [=](checkpoint_atom, int64_t id, int8_t kind) {
      auto& st = self->state;
      // Sources only; one that is done takes no more checkpoints (the
      // JobMaster abandons checkpoints once subtasks finish).
      if (!st.started || st.finished || st.source_done
          || !st.chain->has_source())
        return;
      guarded(self, [&] { take_checkpoint(self, id, kind); });
    },
    [=](checkpoint_atom, int64_t id, operator_states& states) {
      auto& st = self->state;
      guarded(self, [&] { st.chain->snapshot_written(id); });
      if (!st.finished)
        self->send(st.jm, checkpoint_atom_v, st.d.attempt, id,
                   std::move(states));
    },
    [=](checkpoint_atom, int64_t id, std::string& error) {
      fail(self, fmt::format("could not write checkpoint {}: {}", id, error));
    },
    [=](commit_atom, int64_t id) {
      guarded(self, [&] { self->state.chain->commit(id); });
    },
    [=](cancel_atom) {
      auto& st = self->state;
      if (st.finished)
        return;
      st.finished = true;
      st.chain->abort();
      report(self, execution_state::canceled);
      self->quit();
    },
    [=](tick_atom) {
      auto& st = self->state;
      if (!st.chain->has_source()) { // a slow sink is ready for more
        st.sink_busy = false;
        pump(self);
        return;
      }
      st.tick_pending = false;
      if (st.finished || st.source_done || st.chain->backlogged())
        return;
      guarded(self, [&] {
        if (!st.chain->run_source()) {
          st.source_done = true;
          end_of_input(self);
          return;
        }
        drain(self);
        schedule_flush(self);
        send_metrics(self);
        if (!st.chain->backlogged())
          schedule_tick(self);
      });
    },
    [=](flush_atom) {
      auto& st = self->state;
      st.flush_pending = false;
      if (st.finished)
        return;
      guarded(self, [&] {
        for (auto& g : st.chain->gates())
          g.flush();
        drain(self);
        try_finish(self);
      });
    },
  };
}

} // namespace

subtask_actor spawn_subtask(task_deployment d, job_master_actor jm,
                            const subtask_env& env) {
  auto& sys = *env.system;
  chain_env cenv;
  cenv.exchange = env.exchange;
  cenv.local_state_dir = env.local_state_dir;
  cenv.code = env.code;
  cenv.make_driver = [&sys, env, &d] {
    return make_driver_client(sys, env.dispatcher, env.job_master, d, env.code);
  };
  // Build the operators first: whether they block decides the thread model.
  auto built = std::make_shared<built_chain>();
  try {
    built->chain = std::make_unique<operator_chain>(d, cenv);
  } catch (const std::exception& e) {
    built->error = e.what();
  }
  if (built->chain && built->chain->blocking_io())
    return sys.spawn<caf::detached>(subtask_impl, std::move(d), std::move(jm),
                                    std::move(built));
  return sys.spawn(subtask_impl, std::move(d), std::move(jm), std::move(built));
}

} // namespace weir
