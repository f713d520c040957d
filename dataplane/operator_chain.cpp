#include "dataplane/operator_chain.hpp"

#include <fmt/format.h>

#include "dataplane/crash_note.hpp"
#include "operators/demangle.hpp"
#include "operators/key_codec.hpp"
#include "operators/library_loader.hpp"
#include "storage/state/backend_factory.hpp"
#include "storage/state/snapshot_format.hpp"
#include "storage/state_handle.hpp"

namespace weir {

template <class F>
decltype(auto) operator_chain::call(size_t i, F&& f) {
  if (!user_[i])
    return f();
  crash_scope marked{crash_notes_[i].c_str()};
  try {
    return f();
  } catch (const ops::operator_error& e) {
    // The operator's own "cannot go on": its message as it wrote it.
    throw user_code_error(fmt::format("{}: {}", who_[i], e.what()));
  } catch (...) {
    throw user_code_error(
      fmt::format("{} threw {}", who_[i], ops::describe_current_exception()));
  }
}

operator_chain::operator_chain(const task_deployment& d,
                               const exchange_options& opts)
  : operator_chain(d, [&] {
      chain_env env;
      env.exchange = opts;
      return env;
    }()) {
}

operator_chain::operator_chain(const task_deployment& d, const chain_env& env)
  : files_(env.code.files), batch_records_(env.exchange.batch_records) {
  auto& opts = env.exchange;
  auto& local_state_dir = env.local_state_dir;
  auto& reg = ops::registry_for(env.code.libraries);
  bool has_inputs = !d.inputs.empty();
  bool has_outputs = !d.outputs.empty();
  // Schemas first: contexts point into these vectors.
  inputs_.resize(d.chain.size());
  outputs_.resize(d.chain.size());
  for (size_t i = 0; i < d.chain.size(); ++i) {
    inputs_[i] = i == 0 ? d.input : d.chain[i - 1].output;
    outputs_[i] = d.chain[i].output;
  }
  gate_rows_ = d.input;
  if (!d.chain.empty())
    gate_partials_ = d.chain.front().output;
  counters_.resize(d.chain.size());
  rows_in_.resize(d.chain.size());
  rows_out_.resize(d.chain.size());
  for (auto& v : d.chain) {
    user_.push_back(ops::registry::builtin().find(v.op) == nullptr);
    auto subtask = fmt::format("subtask {}/{}", d.subtask_index + 1,
                               d.parallelism);
    who_.push_back(
      fmt::format("vertex '{}' (operator '{}', {})", v.id, v.op, subtask));
    crash_notes_.push_back(fmt::format("{}\toperator '{}' (vertex '{}', {})",
                                       d.attempt.to_string(), v.op, v.id,
                                       subtask));
  }
  for (size_t i = 0; i < d.chain.size(); ++i) {
    auto& v = d.chain[i];
    auto* f = reg.find(v.op);
    if (f == nullptr)
      throw ops::operator_error(
        fmt::format("vertex '{}': unknown operator '{}'", v.id, v.op));
    ops::operator_context ctx;
    ctx.job_name = d.job_name;
    ctx.vertex_id = v.id;
    ctx.subtask_index = d.subtask_index;
    ctx.parallelism = d.parallelism;
    ctx.attempt_number = d.attempt_number;
    ctx.bounded = d.bounded;
    ctx.files = &files_;
    ctx.operators = &reg;
    ctx.counters = &counters_[i];
    bool first_is_source = i == 0 && !has_inputs;
    bool is_sink = i + 1 == d.chain.size() && !has_outputs;
    if (!first_is_source)
      ctx.input = &inputs_[i];
    if (!is_sink)
      ctx.output = &outputs_[i];
    if (i == 0 && has_inputs) {
      try {
        ctx.key = ops::field_indices(d.input, d.input_key);
      } catch (const std::exception& e) {
        throw ops::operator_error(fmt::format("vertex '{}': {}", v.id, e.what()));
      }
    }
    if (v.op == ops::driver_operator_name && env.make_driver) {
      driver_ = env.make_driver();
      ctx.driver = driver_.get();
    }
    contexts_.push_back(ctx);
    bool first = i == 0;
    bool last = i + 1 == d.chain.size();
    if (first && !has_inputs)
      source_ = call(i, [&] { return f->make_source(v.params); });
    else if (last && !has_outputs)
      sink_ = call(i, [&] { return f->make_sink(v.params); });
    else
      transforms_.push_back(
        call(i, [&] { return f->make_transform(v.params); }));
  }
  backends_.resize(contexts_.size());
  for (size_t t = 0; t < transforms_.size(); ++t) {
    if (!transforms_[t]->uses_keyed_state())
      continue;
    auto i = t + (source_ ? 1 : 0);
    auto owner = fmt::format("{}-{}", contexts_[i].vertex_id, d.subtask_index);
    auto dir = fmt::format("{}/{}-{}", local_state_dir, owner,
                           d.attempt.to_string());
    try {
      backends_[i] = state::make_keyed_backend(d.backend, dir, owner);
    } catch (const std::exception& e) {
      throw ops::operator_error(
        fmt::format("vertex '{}': {}", contexts_[i].vertex_id, e.what()));
    }
    contexts_[i].keyed_state = backends_[i].get();
  }
  for (auto& in : d.inputs)
    preaggregated_.push_back(in.preaggregated);
  for (size_t t = 0; t < transforms_.size(); ++t) {
    auto i = t + (source_ ? 1 : 0);
    transform_out_.emplace_back(outputs_[i]);
  }
  auto& last = d.chain.empty() ? d.input : d.chain.back().output;
  for (auto& out : d.outputs) {
    try {
      gates_.emplace_back(out, d.subtask_index, opts, last);
    } catch (const std::exception& e) {
      throw ops::operator_error(fmt::format(
        "vertex '{}': {}", d.chain.empty() ? "?" : d.chain.back().id, e.what()));
    }
  }
}

template <class F>
void operator_chain::visit(size_t i, F&& f) {
  if (source_ && i == 0) {
    f(*source_);
    return;
  }
  auto t = i - (source_ ? 1 : 0);
  if (t < transforms_.size())
    f(*transforms_[t]);
  else
    f(*sink_);
}

void operator_chain::open(const operator_states& restore) {
  // Which context each restored vertex is, and its two parts.
  std::vector<std::pair<size_t, state::vertex_snapshot>> restored;
  for (auto& [vertex, bytes] : restore) {
    size_t i = 0;
    while (i < contexts_.size() && contexts_[i].vertex_id != vertex)
      ++i;
    if (i == contexts_.size())
      throw ops::operator_error(fmt::format(
        "checkpointed state of vertex '{}' has no operator here", vertex));
    std::string state;
    try {
      state = storage::resolve_state(bytes);
    } catch (const std::exception& e) {
      throw ops::operator_error(fmt::format("vertex '{}': {}", vertex, e.what()));
    }
    auto snap = state::decode_vertex_snapshot(state);
    if (!snap)
      throw ops::operator_error(fmt::format(
        "vertex '{}': its checkpointed state is truncated or malformed",
        vertex));
    restored.emplace_back(i, std::move(*snap));
  }
  auto guarded = [&](size_t i, auto&& f) {
    try {
      f();
    } catch (const user_code_error&) {
      throw;
    } catch (const std::exception& e) {
      throw ops::operator_error(
        fmt::format("vertex '{}': {}", contexts_[i].vertex_id, e.what()));
    }
  };
  // Keyed state first: the operators find it when they open.
  for (auto& [i, snap] : restored) {
    if (snap.keyed_state.empty())
      continue;
    guarded(i, [&, i = i] {
      if (!backends_[i])
        throw std::runtime_error("the checkpoint holds keyed state, but the "
                                 "operator keeps none");
      backends_[i]->restore(snap.keyed_state);
    });
  }
  for (size_t i = 0; i < contexts_.size(); ++i)
    guarded(i, [&] {
      call(i, [&] { visit(i, [&](auto& op) { op.open(contexts_[i]); }); });
    });
  for (size_t i = 0; i < contexts_.size(); ++i) {
    if (!backends_[i])
      continue;
    auto left = backends_[i]->unclaimed();
    if (!left.empty())
      throw ops::operator_error(fmt::format(
        "vertex '{}': the checkpoint holds keyed state '{}', which its "
        "operator does not use",
        contexts_[i].vertex_id, left.front()));
  }
  for (auto& [i, snap] : restored)
    if (!snap.operator_state.empty())
      guarded(i, [&, i = i, &snap = snap] {
        call(i, [&] {
          visit(i, [&](auto& op) { op.restore_state(snap.operator_state); });
        });
      });
}

operator_chain::~operator_chain() = default;

bool operator_chain::blocking_io() const {
  for (auto& b : backends_)
    if (b && b->name() == "rocksdb")
      return true; // every state access may read or write the disk
  return (source_ && source_->blocking_io()) || (sink_ && sink_->blocking_io());
}

bool operator_chain::run_source() {
  row_batch batch(outputs_.front());
  batch.reserve(batch_records_);
  bool more = call(0, [&] { return source_->next(batch, batch_records_); });
  auto rows = static_cast<int64_t>(batch.rows);
  metrics_.records_in += rows;
  rows_in_[0] += rows;
  rows_out_[0] += rows;
  push(batch, 0, false);
  return more;
}

void operator_chain::process(size_t gate, row_batch& batch) {
  bool partial = gate < preaggregated_.size() && preaggregated_[gate];
  auto& expected = partial ? gate_partials_ : gate_rows_;
  if (!batch.conforms_to(expected))
    throw ops::operator_error(fmt::format(
      "input {}: a batch does not have the columns of {}", gate,
      to_string(expected)));
  metrics_.records_in += static_cast<int64_t>(batch.rows);
  push(batch, 0, partial);
}

void operator_chain::push(row_batch& batch, size_t first_transform,
                          bool partial) {
  row_batch* current = &batch;
  auto first_context = source_ ? 1 : 0;
  for (size_t i = first_transform; i < transforms_.size(); ++i) {
    auto& out = transform_out_[i];
    out.clear();
    auto c = i + first_context;
    rows_in_[c] += static_cast<int64_t>(current->rows);
    call(c, [&] {
      transforms_[i]->process(*current, out, partial && i == first_transform);
    });
    rows_out_[c] += static_cast<int64_t>(out.rows);
    current = &out;
  }
  deliver(*current);
}

void operator_chain::deliver(row_batch& batch) {
  if (batch.rows == 0)
    return;
  auto rows = static_cast<int64_t>(batch.rows);
  metrics_.records_out += rows;
  if (sink_) {
    auto c = contexts_.size() - 1;
    rows_in_[c] += rows;
    rows_out_[c] += rows;
    call(c, [&] { sink_->write(batch); });
    return;
  }
  for (auto& g : gates_)
    g.emit(batch);
}

void operator_chain::finish() {
  for (size_t i = 0; i < transforms_.size(); ++i) {
    auto c = i + (source_ ? 1 : 0);
    row_batch tail(outputs_[c]);
    call(c, [&] { transforms_[i]->finish(tail); });
    rows_out_[c] += static_cast<int64_t>(tail.rows);
    push(tail, i + 1, false);
  }
  for (auto& g : gates_)
    g.flush();
  if (sink_)
    call(contexts_.size() - 1, [&] { sink_->finish(); });
}

void operator_chain::abort() {
  if (sink_)
    sink_->abort();
}

io_metrics operator_chain::metrics() const {
  auto m = metrics_;
  for (size_t t = 0; t < transforms_.size(); ++t) {
    auto n = transforms_[t]->rows_skipped();
    if (n == 0)
      continue;
    m.records_skipped += n;
    if (m.skipped_note.empty())
      m.skipped_note = fmt::format("vertex '{}': {}",
                                   contexts_[t + (source_ ? 1 : 0)].vertex_id,
                                   transforms_[t]->skip_note());
  }
  for (size_t c = 0; c < contexts_.size(); ++c)
    m.vertices.push_back(vertex_metrics{contexts_[c].vertex_id, rows_in_[c],
                                        rows_out_[c], counters_[c]});
  // Into a combiner (the chain's one output): what travels and what the
  // consumers read are the partial aggregates; the records the combiner
  // took are counted apart (records_combined), so the two sides agree.
  if (!sink_ && gates_.size() == 1 && gates_.front().combines()) {
    auto& g = gates_.front();
    auto& last = m.vertices.back();
    auto folded = g.rows_combined() - g.partials_sent();
    last.records_out -= folded;
    last.records_combined = g.rows_combined();
    m.records_out -= folded;
  }
  return m;
}

bool operator_chain::backlogged() const {
  for (auto& g : gates_)
    if (g.backlogged())
      return true;
  return false;
}

} // namespace weir

namespace weir {

void operator_chain::prepare_commit(int64_t checkpoint) {
  if (sink_)
    call(contexts_.size() - 1, [&] { sink_->prepare_commit(checkpoint); });
}

void operator_chain::commit(int64_t checkpoint) {
  if (sink_)
    call(contexts_.size() - 1, [&] { sink_->commit(checkpoint); });
}

void operator_chain::snapshot_written(int64_t id) {
  for (auto& b : backends_)
    if (b)
      b->snapshot_written(id);
}

chain_snapshot operator_chain::snapshot(int64_t id, state::snapshot_kind kind) {
  chain_snapshot result;
  for (size_t i = 0; i < contexts_.size(); ++i) {
    std::string op_state;
    call(i, [&] { visit(i, [&](auto& op) { op_state = op.snapshot_state(); }); });
    auto& vertex = contexts_[i].vertex_id;
    if (!backends_[i]) {
      if (!op_state.empty())
        result.ready.emplace(vertex,
                             state::encode_vertex_snapshot({op_state, {}}));
      continue;
    }
    auto keyed = backends_[i]->snapshot(id, kind);
    if (!keyed.finish) {
      result.ready.emplace(vertex, state::encode_vertex_snapshot(
                                     {op_state, std::move(keyed.bytes)}));
      continue;
    }
    result.deferred.emplace_back(
      vertex, [op_state, finish = std::move(keyed.finish)] {
        return state::encode_vertex_snapshot({op_state, finish()});
      });
  }
  return result;
}

} // namespace weir
