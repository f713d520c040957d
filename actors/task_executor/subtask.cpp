#include "actors/task_executor/subtask.hpp"

#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <set>

#include <caf/actor_system.hpp>
#include <caf/blocking_actor.hpp>
#include <caf/send.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <fmt/format.h>

#include "actors/task_executor/crash_watch.hpp"
#include "actors/task_executor/data_service.hpp"
#include "actors/task_executor/driver_client.hpp"
#include "actors/task_executor/task_metrics.hpp"
#include "dataplane/subtask_runner.hpp"
#include "messages/errors.hpp"
#include "storage/state_handle.hpp"

namespace weir {

namespace {

/// A barrier frame's detail: its kind, with this bit for a suspending
/// stop's barrier (checkpoint_barrier::suspend).
constexpr uint8_t suspend_bit = 0x10;

/// The subtask's whole interface: the public one and the messages only the
/// subtask itself (its timers) and the thread writing its snapshots send.
using subtask_private_actor = subtask_actor::extend<
  /// Self: the source produces its next batch.
  caf::reacts_to<produce_atom>,
  /// Self: the buffer timeout passed; send partly filled batches.
  caf::reacts_to<flush_atom>,
  /// Self: a metrics interval passed; report the load if it is due.
  caf::reacts_to<tick_atom>,
  /// Self: an operator's processing-time timer is due.
  caf::reacts_to<timer_atom>,
  /// The thread that wrote a snapshot's files: checkpoint `id`'s state is
  /// complete; acknowledge it.
  caf::reacts_to<written_atom, int64_t, operator_states>,
  /// That thread: writing checkpoint `id`'s state failed for the reason given.
  caf::reacts_to<write_failed_atom, int64_t, std::string>,
  /// Its TaskExecutor (detach_subtask): its JobMaster is lost.
  caf::reacts_to<lost_atom>>;

struct subtask_state;

using self_ptr = subtask_private_actor::stateful_pointer<subtask_state>;

/// The actor's side of its subtask_runner: the runner's output as messages to
/// peers and to the JobMaster, and its timers. The actor quits after it
/// reported a terminal state.
struct subtask_state : runner_port {
  explicit subtask_state(self_ptr ptr) : self(ptr) {
  }

  self_ptr self;
  execution_attempt_id attempt;
  int32_t subtask_index = 0;
  job_master_actor jm;
  /// Whether a JobMaster adopted it after a failover: from then on, the
  /// JobMaster's orders from anyone else (a predecessor) are dropped.
  bool adopted = false;
  /// Whether its JobMaster wired and started it (one that crashed in
  /// between left it waiting: it is not adopted).
  bool started = false;
  /// The process's metrics registry (null: none) and this subtask's labels.
  std::shared_ptr<task_metrics> metrics;
  subtask_labels labels;
  std::unique_ptr<subtask_runner> runner;
  std::vector<std::vector<subtask_actor>> consumers;
  /// The consumers' attempts and data ports (as `consumers`; empty: none).
  std::vector<std::vector<consumer_address>> addresses;
  /// The process's data service and data port (none: no data port).
  data_service_actor data;
  data_endpoint own;
  /// The producer of each input channel, once it sent something (credits go
  /// back there): its actor, or its taskmanager and attempt when its
  /// batches come over a data connection.
  std::vector<caf::strong_actor_ptr> producers;
  struct remote_producer {
    resource_id tm;
    execution_attempt_id attempt;
  };
  std::vector<std::optional<remote_producer>> remote_producers;
  /// Peers (consumers, and producers once they sent something) watched so
  /// that losing one fails this subtask instead of stalling it.
  std::set<caf::actor_addr> watched;
  static inline const char* name = "subtask";

  /// Whether the current message may carry a JobMaster's order.
  bool from_job_master() const {
    return !adopted
           || caf::actor_cast<caf::actor_addr>(self->current_sender())
                == jm.address();
  }

  void watch(const caf::strong_actor_ptr& peer) {
    if (peer && watched.insert(caf::actor_cast<caf::actor_addr>(peer)).second)
      self->monitor(peer);
  }

  /// Remembers (and watches) who sends on `channel`, the first time it
  /// sends: a channel has one producer.
  void note_producer(int32_t channel) {
    auto ch = static_cast<size_t>(channel);
    if (ch >= producers.size() || producers[ch])
      return;
    producers[ch] = self->current_sender();
    watch(producers[ch]);
  }

  /// Remembers who sends on `channel` over a data connection.
  void note_remote_producer(int32_t channel, const resource_id& tm,
                            const execution_attempt_id& producer) {
    auto ch = static_cast<size_t>(channel);
    if (channel < 0 || ch >= remote_producers.size() || remote_producers[ch])
      return;
    remote_producers[ch] = remote_producer{tm, producer};
  }

  const subtask_actor& consumer(size_t gate, int32_t index) const {
    return consumers[gate][static_cast<size_t>(index)];
  }

  /// Whether the peer with data port `where` is another taskmanager that
  /// this one reaches over a data connection.
  bool remote(const data_endpoint& where) const {
    return data && own.valid() && where.valid() && where.tm != own.tm;
  }

  /// The consumer's address when its batches travel over a data
  /// connection; null when they go to its actor.
  const consumer_address* remote_consumer(size_t gate, int32_t index) const {
    if (gate >= addresses.size())
      return nullptr;
    auto& a = addresses[gate][static_cast<size_t>(index)];
    return remote(a.where) ? &a : nullptr;
  }

  frame_header header_to(const consumer_address& a, frame_kind kind,
                         size_t gate, int32_t channel, int64_t seq) const {
    frame_header h;
    h.kind = kind;
    h.to = a.attempt;
    h.from = attempt;
    h.channel = channel;
    h.port = static_cast<int32_t>(gate);
    h.seq = seq;
    return h;
  }

  void send_batch(size_t gate, int32_t consumer_index, int32_t channel,
                  int64_t seq, row_batch&& batch) override {
    if (auto* a = remote_consumer(gate, consumer_index)) {
      // Encoded here, on the producer's thread: the data service only
      // copies bytes.
      std::string payload;
      encode_into(batch, payload);
      self->send(data, send_atom_v, a->where.tm,
                 header_to(*a, frame_kind::batch, gate, channel, seq),
                 std::move(payload));
      return;
    }
    self->send(consumer(gate, consumer_index), data_atom_v, channel,
               static_cast<int32_t>(gate), seq, std::move(batch));
  }

  void send_barrier(size_t gate, int32_t consumer_index, int32_t channel,
                    int64_t seq, const checkpoint_barrier& barrier) override {
    if (auto* a = remote_consumer(gate, consumer_index)) {
      auto h = header_to(*a, frame_kind::barrier, gate, channel, seq);
      h.value = barrier.id;
      // The kind, and a suspending stop's flag above it.
      h.detail = static_cast<uint8_t>(static_cast<uint8_t>(barrier.kind)
                                      | (barrier.suspend ? suspend_bit : 0));
      self->send(data, send_atom_v, a->where.tm, h, std::string{});
      return;
    }
    self->send(consumer(gate, consumer_index), barrier_atom_v, channel,
               static_cast<int32_t>(gate), seq, barrier);
  }

  void send_watermark(size_t gate, int32_t consumer_index, int32_t channel,
                      int64_t seq, const watermark_mark& mark) override {
    if (auto* a = remote_consumer(gate, consumer_index)) {
      auto h = header_to(*a, frame_kind::watermark, gate, channel, seq);
      h.value = mark.time;
      h.detail = mark.idle ? 1 : 0;
      self->send(data, send_atom_v, a->where.tm, h, std::string{});
      return;
    }
    self->send(consumer(gate, consumer_index), watermark_atom_v, channel,
               static_cast<int32_t>(gate), seq, mark.time, mark.idle);
  }

  void send_end(size_t gate, int32_t consumer_index, int32_t channel,
                int64_t events) override {
    if (auto* a = remote_consumer(gate, consumer_index)) {
      auto h = header_to(*a, frame_kind::end, gate, channel, 0);
      h.value = events;
      self->send(data, send_atom_v, a->where.tm, h, std::string{});
      return;
    }
    self->send(consumer(gate, consumer_index), end_atom_v, channel, events);
  }

  void send_backlog(size_t gate, int32_t consumer_index, int32_t channel,
                    int32_t waiting) override {
    if (auto* a = remote_consumer(gate, consumer_index)) {
      auto h = header_to(*a, frame_kind::backlog, gate, channel, 0);
      h.value = waiting;
      self->send(data, send_atom_v, a->where.tm, h, std::string{});
      return;
    }
    self->send(consumer(gate, consumer_index), backlog_atom_v, channel,
               static_cast<int32_t>(gate), waiting);
  }

  void return_credit(int32_t channel, int32_t port, int32_t n) override {
    auto ch = static_cast<size_t>(channel);
    if (ch < remote_producers.size() && remote_producers[ch]) {
      auto& p = *remote_producers[ch];
      frame_header h;
      h.kind = frame_kind::credit;
      h.to = p.attempt;
      h.from = attempt;
      h.port = port;
      h.channel = subtask_index;
      h.value = n;
      self->send(data, send_atom_v, p.tm, h, std::string{});
      return;
    }
    if (ch < producers.size() && producers[ch])
      self->send(caf::actor_cast<subtask_actor>(producers[ch]), credit_atom_v,
                 port, subtask_index, n);
  }

  /// The report also goes to the process's metrics endpoint (at the
  /// runner's metrics interval and state changes, never per record).
  void note(const io_metrics& m, bool ended) {
    if (metrics)
      metrics->update(labels, m, ended, task_metrics::clock::now());
  }

  void report(execution_state s, const io_metrics& metrics,
              std::string error) override {
    note(metrics, is_terminal(s));
    self->send(jm, update_atom_v, attempt, s, metrics, std::move(error));
    if (is_terminal(s))
      self->quit();
  }

  void send_metrics(const io_metrics& metrics) override {
    note(metrics, false);
    self->send(jm, metrics_atom_v, attempt, metrics);
  }

  void hand_over(collected_table&& rows) override {
    self->send(jm, collect_atom_v, attempt, std::move(rows));
  }

  void acknowledge(int64_t id, int64_t alignment_ms,
                   operator_states&& states) override {
    self->send(jm, checkpoint_atom_v, attempt, id, alignment_ms,
               std::move(states));
  }

  void write_snapshot(int64_t id, chain_snapshot&& snap) override;

  void schedule_produce(std::chrono::microseconds pause) override {
    if (pause.count() > 0)
      self->delayed_send(self, pause, produce_atom_v);
    else
      self->send(self, produce_atom_v);
  }

  void schedule_flush(std::chrono::milliseconds timeout) override {
    self->delayed_send(self, timeout, flush_atom_v);
  }

  void schedule_metrics(std::chrono::milliseconds timeout) override {
    self->delayed_send(self, timeout, tick_atom_v);
  }

  void schedule_timers(std::chrono::milliseconds timeout) override {
    self->delayed_send(self, timeout, timer_atom_v);
  }

  int32_t waiting_input() override {
    return static_cast<int32_t>(self->mailbox().size());
  }
};

/// Writes the deferred parts of a snapshot on a thread of its own (blocking
/// I/O) and hands the complete states back to the subtask.
void subtask_state::write_snapshot(int64_t id, chain_snapshot&& snap) {
  auto subtask = caf::actor_cast<subtask_private_actor>(self);
  auto shared = std::make_shared<chain_snapshot>(std::move(snap));
  self->system().spawn([subtask, id, shared](caf::blocking_actor* writer) {
    try {
      auto states = std::move(shared->ready);
      for (auto& [vertex, finish] : shared->deferred)
        states[vertex] = finish();
      // What the snapshot held (frozen tables) is released before the
      // subtask hears that it was written.
      shared->deferred.clear();
      writer->send(subtask, written_atom_v, id, std::move(states));
    } catch (const std::exception& e) {
      writer->send(subtask, write_failed_atom_v, id, std::string{e.what()});
    }
  });
}

subtask_labels labels_of(const task_deployment& d) {
  return subtask_labels{d.job,
                        d.job_name,
                        d.task_index,
                        d.chain.empty() ? std::string{} : d.chain.front().id,
                        d.task_name,
                        d.subtask_index,
                        d.attempt_number};
}

size_t input_channels(const task_deployment& d) {
  size_t n = 0;
  for (auto& in : d.inputs)
    n += static_cast<size_t>(in.channels);
  return n;
}

/// A frame from a producer on another taskmanager, decoded and handed to
/// the runner as the messages of a local producer are.
void on_frame(subtask_state& st, const resource_id& from,
              const frame_header& h, const std::vector<char>& payload) {
  st.note_remote_producer(h.channel, from, h.from);
  switch (h.kind) {
    case frame_kind::batch: {
      row_batch b;
      if (!decode(std::string_view{payload.data(), payload.size()}, b)) {
        st.runner->fail(fmt::format("a malformed batch from taskmanager {}",
                                    from.value));
        return;
      }
      st.runner->on_batch(h.channel, h.port, h.seq, std::move(b));
      return;
    }
    case frame_kind::barrier:
      if ((h.detail & ~suspend_bit)
          > static_cast<uint8_t>(checkpoint_kind::savepoint)) {
        st.runner->fail(fmt::format("a barrier of an unknown kind from "
                                    "taskmanager {}",
                                    from.value));
        return;
      }
      st.runner->on_barrier(h.channel, h.port, h.seq,
                            checkpoint_barrier{
                              h.value,
                              static_cast<checkpoint_kind>(h.detail
                                                           & ~suspend_bit),
                              (h.detail & suspend_bit) != 0});
      return;
    case frame_kind::watermark: // the guard let only detail 0 or 1 in
      st.runner->on_watermark(h.channel, h.port, h.seq,
                              watermark_mark{h.value, h.detail == 1});
      return;
    case frame_kind::end:
      st.runner->on_end(h.channel, h.value);
      return;
    case frame_kind::backlog:
      st.runner->on_backlog(h.channel, h.port,
                            static_cast<int32_t>(h.value));
      return;
    default:
      return; // hellos and credits never reach a subtask
  }
}

/// Tells the data service which taskmanagers this subtask exchanges with
/// (it dials those it must, and reports lost connections), before any of
/// the subtask's frames.
void connect_data(subtask_state& st, const std::vector<data_endpoint>& from) {
  std::vector<data_endpoint> peers;
  auto add = [&](const data_endpoint& e) {
    if (st.remote(e) && std::find(peers.begin(), peers.end(), e) == peers.end())
      peers.push_back(e);
  };
  for (auto& e : from)
    add(e);
  for (auto& list : st.addresses)
    for (auto& a : list)
      add(a.where);
  if (!peers.empty())
    st.self->send(st.data, caf::connect_atom::value, std::move(peers),
                  subtask_actor{st.self});
}

subtask_private_actor::behavior_type
subtask_impl(self_ptr self, task_deployment d, job_master_actor jm,
             std::shared_ptr<built_chain> built,
             std::shared_ptr<task_metrics> metrics, data_service_actor data,
             data_endpoint own, exchange_options exchange) {
  auto& st = self->state;
  st.data = std::move(data);
  st.own = std::move(own);
  st.metrics = std::move(metrics);
  st.labels = labels_of(d);
  st.attempt = d.attempt;
  st.subtask_index = d.subtask_index;
  st.jm = std::move(jm);
  st.producers.resize(input_channels(d));
  st.remote_producers.resize(input_channels(d));
  st.runner = std::make_unique<subtask_runner>(d, st, load_meter::clock::now,
                                               exchange);
  // A peer that ended (finished, canceled, failed: it reports that itself) is
  // fine. A peer that became unreachable (its process killed, the link
  // between two workers cut) takes this subtask down too, so the JobMaster
  // fails or restarts the job instead of waiting forever. (CAF reports
  // remote peers that simply ended with an "unknown" reason.)
  self->set_down_handler([=](caf::down_msg& dm) {
    if (dm.reason == caf::exit_reason::remote_link_unreachable)
      self->state.runner->fail("lost the connection to a peer subtask");
  });
  // Reports INITIALIZING, or FAILED (and the actor quits).
  st.runner->open(std::move(*built), d.restore);
  // A subtask whose operators could not open ends here, with no behavior:
  // nothing (a late wiring, peers to watch) may run on an actor that quit
  // during its initialization.
  if (st.runner->terminal())
    return subtask_private_actor::behavior_type::make_empty_behavior();
  return {
    [=](start_atom, subtask_wiring& w) {
      auto& st = self->state;
      st.started = true;
      st.consumers = std::move(w.consumers);
      st.addresses = std::move(w.addresses);
      connect_data(st, w.producers);
      for (auto& list : st.consumers)
        for (auto& c : list)
          st.watch(caf::actor_cast<caf::strong_actor_ptr>(c));
      st.runner->start();
    },
    [=](data_atom, int32_t channel, int32_t port, int64_t seq,
        row_batch& b) {
      self->state.note_producer(channel);
      self->state.runner->on_batch(channel, port, seq, std::move(b));
    },
    [=](barrier_atom, int32_t channel, int32_t port, int64_t seq,
        const checkpoint_barrier& b) {
      self->state.note_producer(channel);
      self->state.runner->on_barrier(channel, port, seq, b);
    },
    [=](watermark_atom, int32_t channel, int32_t port, int64_t seq,
        int64_t time, bool idle) {
      self->state.note_producer(channel);
      self->state.runner->on_watermark(channel, port, seq,
                                       watermark_mark{time, idle});
    },
    [=](end_atom, int32_t channel, int64_t events) {
      self->state.runner->on_end(channel, events);
    },
    [=](backlog_atom, int32_t channel, int32_t port, int32_t waiting) {
      self->state.note_producer(channel);
      self->state.runner->on_backlog(channel, port, waiting);
    },
    [=](frame_atom, const resource_id& from, const frame_header& h,
        const std::vector<char>& payload) {
      on_frame(self->state, from, h, payload);
    },
    [=](lost_atom, const std::string& why) { self->state.runner->fail(why); },
    [=](credit_atom, int32_t port, int32_t consumer, int32_t n) {
      self->state.runner->on_credit(port, consumer, n);
    },
    [=](trigger_atom, const checkpoint_barrier& b) {
      if (self->state.from_job_master())
        self->state.runner->trigger(b);
    },
    [=](stop_atom, const checkpoint_barrier& b) {
      if (self->state.from_job_master())
        self->state.runner->stop_at(b);
    },
    [=](finish_atom) { self->state.runner->end_input(); },
    [=](resume_atom) { self->state.runner->resume(); },
    [=](commit_atom, int64_t id) {
      if (self->state.from_job_master())
        self->state.runner->commit(id);
    },
    [=](cancel_atom) {
      // After an adoption, from its TaskExecutor (on this node) or its
      // JobMaster, not from a predecessor that lives on.
      auto& st = self->state;
      auto sender = self->current_sender();
      if (st.from_job_master()
          || (sender && sender->node() == self->node()))
        st.runner->cancel();
    },
    [=](adopt_atom, job_master_actor& jm) -> caf::result<int64_t> {
      auto& st = self->state;
      if (!st.started)
        return make_error(errc::not_running,
                          "it was deployed but never started");
      // Its JobMaster died during a `weir stop`, which the new one does not
      // know of: a restart lets the sources produce again.
      if (st.runner->halted())
        return make_error(errc::not_running,
                          "its sources are halted by a stop that was cut "
                          "short");
      st.jm = std::move(jm);
      st.adopted = true;
      crash_watch::route(st.attempt, st.jm);
      st.runner->attach();
      return st.runner->newest_checkpoint();
    },
    [=](produce_atom) { self->state.runner->produce(); },
    [=](flush_atom) { self->state.runner->flush(); },
    [=](tick_atom) { self->state.runner->metrics_tick(); },
    [=](timer_atom) { self->state.runner->on_timers(); },
    [=](written_atom, int64_t id, operator_states& states) {
      self->state.runner->snapshot_written(id, std::move(states));
    },
    [=](write_failed_atom, int64_t id, const std::string& error) {
      self->state.runner->snapshot_failed(id, error);
    },
    [=](lost_atom) { self->state.runner->detach(); },
  };
}

/// Whether opening reads state from checkpoint storage (blocking I/O).
bool restores_from_files(const operator_states& restore) {
  return std::any_of(restore.begin(), restore.end(), [](auto& entry) {
    return storage::is_state_handle(entry.second);
  });
}

} // namespace

void detach_subtask(const subtask_actor& h) {
  caf::anon_send(caf::actor_cast<subtask_private_actor>(h), lost_atom_v);
}

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
  // Where a crash of its user code is reported (building the operators
  // runs their factories already).
  auto attempt = d.attempt;
  crash_watch::route(attempt, jm);
  // Build the operators first: whether they block decides the thread model.
  auto built = std::make_shared<built_chain>(build_chain(d, cenv));
  subtask_actor handle;
  if (built->chain
      && (built->chain->blocking_io() || restores_from_files(d.restore)))
    handle = sys.spawn<caf::detached>(subtask_impl, std::move(d),
                                      std::move(jm), std::move(built),
                                      env.metrics, env.data,
                                      env.data_port, env.exchange);
  else
    handle = sys.spawn(subtask_impl, std::move(d), std::move(jm),
                       std::move(built), env.metrics, env.data,
                       env.data_port, env.exchange);
  // Frames for the subtask find it from now on, before its producers can
  // send (they start after every subtask is deployed).
  auto registry = env.registry;
  if (registry)
    registry->add(attempt, handle);
  caf::actor_cast<caf::abstract_actor*>(handle)->attach_functor(
    [attempt, registry] {
      crash_watch::forget(attempt);
      if (registry)
        registry->remove(attempt);
    });
  return handle;
}

} // namespace weir
