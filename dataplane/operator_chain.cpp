#include "dataplane/operator_chain.hpp"

#include <algorithm>
#include <limits>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "dataplane/crash_note.hpp"
#include "messages/key_groups.hpp"
#include "operators/demangle.hpp"
#include "operators/in_process.hpp"
#include "operators/key_codec.hpp"
#include "operators/library_loader.hpp"
#include "storage/state/backend_factory.hpp"
#include "storage/state/rescale.hpp"
#include "storage/state/snapshot_format.hpp"
#include "storage/state_handle.hpp"

namespace weir {

namespace {

state::key_group_fn key_group_function(const ops::operator_context& ctx,
                                       int32_t max_parallelism,
                                       size_t suffix);

} // namespace

template <class F>
decltype(auto) operator_chain::call(size_t i, F&& f) {
  if (!links_[i].user)
    return f();
  crash_scope marked{links_[i].crash_note.c_str()};
  try {
    return f();
  } catch (const ops::operator_error& e) {
    // The operator's own "cannot go on": its message as it wrote it.
    throw user_code_error(fmt::format("{}: {}", links_[i].who, e.what()));
  } catch (...) {
    throw user_code_error(
      fmt::format("{} threw {}", links_[i].who, ops::describe_current_exception()));
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
  // Sized once: the contexts point into the links.
  links_.resize(d.chain.size());
  assigner_ = links_.size(); // none until a vertex has "watermarks"

  gate_rows_ = d.input;
  if (!d.chain.empty())
    gate_partials_ = d.chain.front().output;
  auto subtask = fmt::format("subtask {}/{}", d.subtask_index + 1,
                             d.parallelism);
  for (size_t i = 0; i < d.chain.size(); ++i) {
    auto& v = d.chain[i];
    auto& link = links_[i];
    link.input = i == 0 ? d.input : d.chain[i - 1].output;
    link.output = v.output;
    // User code: a library's operator, a program's lambda or named
    // function (in-process) — its failures name vertex, operator and
    // subtask alike.
    link.user = !ops::registry::builtin().has_own(v.op);
    link.op = v.op;
    link.who = fmt::format("vertex '{}' (operator '{}', {})", v.id,
                           ops::operator_label(v.op), subtask);
    link.crash_note = fmt::format("{}\toperator '{}' (vertex '{}', {})",
                                  d.attempt.to_string(), v.op, v.id, subtask);
    auto* f = reg.find(v.op);
    if (f == nullptr)
      throw ops::operator_error(
        fmt::format("vertex '{}': unknown operator '{}'", v.id, v.op));
    if (v.watermarks.enabled()) {
      auto field = v.output.find(v.watermarks.field);
      if (!field)
        throw ops::operator_error(fmt::format(
          "vertex '{}': watermarks.field '{}' is not in {}", v.id,
          v.watermarks.field, to_string(v.output)));
      link.watermarks = v.watermarks;
      link.time_field = *field;
      assigner_ = i;
    }
    auto& ctx = link.context;
    ctx.job_name = d.job_name;
    ctx.vertex_id = v.id;
    ctx.subtask_index = d.subtask_index;
    ctx.parallelism = d.parallelism;
    ctx.attempt_number = d.attempt_number;
    ctx.bounded = d.bounded;
    ctx.files = &files_;
    ctx.operators = &reg;
    ctx.counters = &link.counters;
    bool first = i == 0;
    bool last = i + 1 == d.chain.size();
    bool is_source = first && !has_inputs;
    bool is_sink = last && !has_outputs;
    if (!is_source)
      ctx.input = &link.input;
    if (!is_sink)
      ctx.output = &link.output;
    if (first && has_inputs) {
      try {
        ctx.key = ops::field_indices(d.input, d.input_key);
        if (f->two_inputs) {
          // Each gate's rows, by gate: the contexts point into gate_rows_of_.
          for (auto& gate : d.inputs)
            gate_rows_of_.push_back(gate.rows);
          for (size_t g = 0; g < d.inputs.size(); ++g)
            ctx.inputs.push_back({d.inputs[g].from, &gate_rows_of_[g],
                                  ops::field_indices(gate_rows_of_[g],
                                                     d.inputs[g].key)});
        }
      } catch (const std::exception& e) {
        throw ops::operator_error(fmt::format("vertex '{}': {}", v.id, e.what()));
      }
    }
    if (v.op == ops::driver_operator_name && env.make_driver) {
      driver_ = env.make_driver();
      ctx.driver = driver_.get();
    }
    if (is_source) {
      source_ = call(i, [&] { return f->make_source(v.params); });
      continue;
    }
    if (is_sink) {
      sink_ = call(i, [&] { return f->make_sink(v.params); });
      continue;
    }
    link.transform = call(i, [&] { return f->make_transform(v.params); });
    link.transform_out = row_batch(link.output);
    if (!link.transform->uses_keyed_state())
      continue;
    auto owner = fmt::format("{}-{}", v.id, d.subtask_index);
    auto dir = fmt::format("{}/{}-{}", local_state_dir, owner,
                           d.attempt.to_string());
    // A keyed operator's keys carry their key group (RocksDB): a rescale
    // reads its range of groups only.
    state::key_group_fn groups;
    if (d.backend.type == "rocksdb") {
      try {
        groups = key_group_function(ctx, d.max_parallelism,
                                    v.op == "window" ? 8 : 0);
      } catch (const std::exception&) {
        // Not partitioned by key: its keys are stored as they are.
      }
    }
    auto max_parallelism = groups ? d.max_parallelism : 0;
    try {
      link.backend = state::make_keyed_backend(
        d.backend, dir, owner, std::move(groups), max_parallelism);
    } catch (const std::exception& e) {
      throw ops::operator_error(fmt::format("vertex '{}': {}", v.id, e.what()));
    }
    ctx.keyed_state = link.backend.get();
    link.timers = std::make_unique<ops::keyed_timers>(*link.backend);
    ctx.timers = link.timers.get();
  }
  for (auto& in : d.inputs)
    preaggregated_.push_back(in.preaggregated);
  auto& last = d.chain.empty() ? d.input : d.chain.back().output;
  for (auto& out : d.outputs) {
    try {
      if (!out.output.empty()) {
        // A side output of the last operator: its own rows and batch.
        auto& sides = d.chain.back().side_outputs;
        auto rows = sides.find(out.output);
        if (rows == sides.end())
          throw std::runtime_error("no side output '" + out.output + "'");
        side_batches_.emplace(out.output, row_batch{rows->second});
        gates_.emplace_back(out, d.subtask_index, opts, rows->second);
        continue;
      }
      gates_.emplace_back(out, d.subtask_index, opts, last);
    } catch (const std::exception& e) {
      throw ops::operator_error(fmt::format(
        "vertex '{}': {}", d.chain.empty() ? "?" : d.chain.back().id, e.what()));
    }
  }
  if (!side_batches_.empty() && links_.back().transform)
    links_.back().context.side_batches = &side_batches_;
}

template <class F>
void operator_chain::visit(size_t i, F&& f) {
  if (auto& link = links_[i]; link.transform)
    f(*link.transform);
  else if (source_ && i == 0)
    f(*source_);
  else
    f(*sink_);
}

namespace {

/// A keyed operator's key group function: decodes a keyed state's key with
/// the operator's key codec and hashes its fields as hash partitioning
/// does, so a key's group is the one its rows were routed by. A window's
/// state keys are the key then its window's end (8 bytes): `suffix`.
state::key_group_fn key_group_function(const ops::operator_context& ctx,
                                       int32_t max_parallelism,
                                       size_t suffix) {
  const schema* rows = ctx.input;
  auto key = ctx.key;
  if (!ctx.inputs.empty()) { // two inputs: their keys' fields are alike
    rows = ctx.inputs.front().rows;
    key = ctx.inputs.front().key;
  }
  if (rows == nullptr || key.empty())
    throw std::runtime_error("its keyed state cannot be split over another "
                             "parallelism: its input is not partitioned by "
                             "key");
  auto codec = std::make_shared<ops::key_codec>(*rows, key);
  schema fields;
  std::vector<size_t> all;
  for (auto i : key) {
    fields.fields.push_back(rows->fields[i]);
    all.push_back(all.size());
  }
  auto scratch = std::make_shared<row_batch>(fields);
  return [=](std::string_view k) {
    if (k.size() < suffix)
      throw std::runtime_error("a keyed state's key is shorter than its "
                               "window's end");
    k.remove_suffix(suffix);
    scratch->clear();
    codec->decode(k, *scratch);
    ++scratch->rows;
    return key_group_of_hash(ops::key_hash(*scratch, all, 0), max_parallelism);
  };
}

} // namespace

void operator_chain::open(const operator_states& restore) {
  // Which context each restored vertex is, and its two parts; a vertex
  // restored at another parallelism also has every old subtask's operator
  // state (restore_rescaled).
  struct restored_vertex {
    size_t link;
    state::vertex_snapshot snap;
    std::optional<std::vector<std::string>> old_operator_states;
  };
  std::vector<restored_vertex> restored;
  for (auto& [vertex, bytes] : restore) {
    size_t i = 0;
    while (i < links_.size() && links_[i].context.vertex_id != vertex)
      ++i;
    if (i == links_.size())
      throw ops::operator_error(fmt::format(
        "checkpointed state of vertex '{}' has no operator here", vertex));
    auto malformed = [&] {
      return ops::operator_error(fmt::format(
        "vertex '{}': its checkpointed state is truncated or malformed",
        vertex));
    };
    std::string state;
    try {
      state = storage::resolve_state(bytes);
    } catch (const std::exception& e) {
      throw ops::operator_error(fmt::format("vertex '{}': {}", vertex, e.what()));
    }
    if (!state::is_rescaled(state)) {
      auto snap = state::decode_vertex_snapshot(state);
      if (!snap)
        throw malformed();
      restored.push_back({i, std::move(*snap), std::nullopt});
      continue;
    }
    auto rescaled = state::decode_rescaled(state);
    if (!rescaled)
      throw malformed();
    restored_vertex r{i, {}, std::vector<std::string>{}};
    std::vector<std::string> keyed;
    std::vector<std::optional<int64_t>> old_times;
    for (auto& old : rescaled->old_subtasks) {
      if (old.bytes.empty()) { // that subtask kept no state
        r.old_operator_states->emplace_back();
        old_times.emplace_back();
        continue;
      }
      std::optional<state::vertex_snapshot> snap;
      try {
        snap = state::decode_vertex_snapshot(storage::resolve_state(old.bytes));
      } catch (const std::exception& e) {
        throw ops::operator_error(
          fmt::format("vertex '{}': {}", vertex, e.what()));
      }
      if (!snap)
        throw malformed();
      r.old_operator_states->push_back(std::move(snap->operator_state));
      if (old.keyed)
        keyed.push_back(std::move(snap->keyed_state));
      // The lowest old event time: a new subtask continues from several
      // old positions, and none of their rows may be taken for late.
      if (snap->max_event_time)
        r.snap.max_event_time = std::min(
          r.snap.max_event_time.value_or(std::numeric_limits<int64_t>::max()),
          *snap->max_event_time);
      old_times.push_back(snap->max_event_time);
    }
    bool any_keyed = std::any_of(keyed.begin(), keyed.end(),
                                 [](auto& k) { return !k.empty(); });
    if (any_keyed) {
      try {
        r.snap.keyed_state = state::select_key_groups(
          keyed, rescaled->range,
          key_group_function(links_[i].context, rescaled->max_parallelism,
                             links_[i].op == "window" ? 8 : 0),
          rescaled->max_parallelism);
      } catch (const std::exception& e) {
        throw ops::operator_error(
          fmt::format("vertex '{}': {}", vertex, e.what()));
      }
    }
    if (rescaled->same_parallelism) {
      // Only the key groups changed: operator state stays with its index.
      auto index = static_cast<size_t>(links_[i].context.subtask_index);
      if (index < r.old_operator_states->size()) {
        r.snap.operator_state = std::move((*r.old_operator_states)[index]);
        r.snap.max_event_time = old_times[index];
      }
      r.old_operator_states.reset();
    }
    restored.push_back(std::move(r));
  }
  auto guarded = [&](size_t i, auto&& f) {
    try {
      f();
    } catch (const user_code_error&) {
      throw;
    } catch (const std::exception& e) {
      throw ops::operator_error(
        fmt::format("vertex '{}': {}", links_[i].context.vertex_id, e.what()));
    }
  };
  // Keyed state first: the operators find it when they open.
  for (auto& [i, snap, old] : restored) {
    if (snap.keyed_state.empty())
      continue;
    guarded(i, [&, i = i, &snap = snap] {
      if (!links_[i].backend)
        throw std::runtime_error("the checkpoint holds keyed state, but the "
                                 "operator keeps none");
      links_[i].backend->restore(snap.keyed_state);
      links_[i].timers->claim_restored();
    });
  }
  for (size_t i = 0; i < links_.size(); ++i)
    guarded(i, [&] {
      call(i, [&] { visit(i, [&](auto& op) { op.open(links_[i].context); }); });
    });
  for (size_t i = 0; i < links_.size(); ++i) {
    if (!links_[i].backend)
      continue;
    auto left = links_[i].backend->unclaimed();
    if (!left.empty())
      throw ops::operator_error(fmt::format(
        "vertex '{}': the checkpoint holds keyed state '{}', which its "
        "operator does not use",
        links_[i].context.vertex_id, left.front()));
  }
  // A vertex with "watermarks" goes on from the event time it had reached.
  for (auto& [i, snap, old] : restored)
    if (snap.max_event_time && links_[i].watermarks.enabled())
      links_[i].max_time = *snap.max_event_time;
  for (auto& [i, snap, old] : restored) {
    if (old) {
      if (std::any_of(old->begin(), old->end(),
                      [](auto& bytes) { return !bytes.empty(); }))
        guarded(i, [&, i = i, &old = old] {
          call(i, [&] {
            visit(i, [&](auto& op) { op.restore_rescaled(*old); });
          });
        });
      continue;
    }
    if (!snap.operator_state.empty())
      guarded(i, [&, i = i, &snap = snap] {
        call(i, [&] {
          visit(i, [&](auto& op) { op.restore_state(snap.operator_state); });
        });
      });
  }
}

operator_chain::~operator_chain() = default;

bool operator_chain::blocking_io() const {
  for (auto& link : links_)
    if (link.backend && link.backend->name() == "rocksdb")
      return true; // every state access may read or write the disk
  return (source_ && source_->blocking_io()) || (sink_ && sink_->blocking_io());
}

bool operator_chain::run_source() {
  row_batch batch(links_.front().output);
  batch.reserve(batch_records_);
  bool more = call(0, [&] { return source_->next(batch, batch_records_); });
  auto rows = static_cast<int64_t>(batch.rows);
  metrics_.records_in += rows;
  links_.front().rows_in += rows;
  links_.front().rows_out += rows;
  stamp(0, batch);
  push(batch, 1, false);
  return more;
}

void operator_chain::process(size_t gate, row_batch& batch) {
  bool partial = gate < preaggregated_.size() && preaggregated_[gate];
  bool two_inputs = !gate_rows_of_.empty();
  auto& expected = two_inputs && gate < gate_rows_of_.size()
                     ? gate_rows_of_[gate]
                     : (partial ? gate_partials_ : gate_rows_);
  if (!batch.conforms_to(expected))
    throw ops::operator_error(fmt::format(
      "input {}: a batch does not have the columns of {}", gate,
      to_string(expected)));
  metrics_.records_in += static_cast<int64_t>(batch.rows);
  if (!two_inputs) {
    push(batch, 0, partial);
    return;
  }
  // The first operator takes two inputs: it is told which one this is.
  auto& link = links_[0];
  auto& out = link.transform_out;
  out.clear();
  link.rows_in += static_cast<int64_t>(batch.rows);
  call(0, [&] { link.transform->process_input(gate, batch, out); });
  batch.clear();
  pass_on(0, out);
}

void operator_chain::pass_on(size_t c, row_batch& batch) {
  links_[c].rows_out += static_cast<int64_t>(batch.rows);
  stamp(c, batch);
  push(batch, c + 1, false);
}

void operator_chain::push(row_batch& batch, size_t first, bool partial) {
  row_batch* current = &batch;
  bool first_transform = true;
  for (size_t c = first; c < links_.size(); ++c) {
    auto& link = links_[c];
    if (!link.transform)
      continue; // the sink: deliver() below
    auto& out = link.transform_out;
    out.clear();
    link.rows_in += static_cast<int64_t>(current->rows);
    call(c, [&] {
      link.transform->process(*current, out, partial && first_transform);
    });
    link.rows_out += static_cast<int64_t>(out.rows);
    stamp(c, out);
    first_transform = false;
    current = &out;
  }
  deliver(*current);
}

void operator_chain::stamp(size_t c, row_batch& batch) {
  auto& link = links_[c];
  if (!link.watermarks.enabled() || batch.rows == 0)
    return;
  auto& times = batch.columns[link.time_field];
  if (!times.nulls.empty())
    for (size_t r = 0; r < batch.rows; ++r)
      if (times.is_null(r))
        throw ops::operator_error(fmt::format(
          "vertex '{}': watermarks.field '{}' is null in a row; every row "
          "needs an event time",
          link.context.vertex_id, link.watermarks.field));
  batch.times.assign(times.ints.begin(), times.ints.begin() + batch.rows);
  for (auto t : batch.times)
    link.max_time = std::max(link.max_time, t);
  if (c == assigner_)
    stamped_rows_ += static_cast<int64_t>(batch.rows);
}

int64_t operator_chain::generated_watermark() const {
  if (!makes_watermarks())
    return no_watermark;
  auto& link = links_[assigner_];
  if (link.max_time == no_watermark)
    return no_watermark;
  // Saturating: an event time near the lowest int64 stays a watermark.
  auto lag = link.watermarks.max_out_of_orderness_ms + 1;
  return link.max_time < no_watermark + lag ? no_watermark
                                            : link.max_time - lag;
}

void operator_chain::fire(size_t from, size_t to, int64_t wm) {
  for (size_t c = from; c < to && c < links_.size(); ++c) {
    auto& link = links_[c];
    if (!link.transform)
      continue;
    row_batch fired(link.output);
    if (link.timers) {
      link.timers->advance_watermark(wm);
      if (wm == std::numeric_limits<int64_t>::max())
        fire_listed(c, ops::time_domain::event_time, // the end
                    timers_of(c, ops::time_domain::event_time), fired);
      else
        fire_timers(c, ops::time_domain::event_time, wm, fired);
    }
    call(c, [&] { link.transform->on_watermark(wm, fired); });
    if (fired.rows > 0)
      pass_on(c, fired);
  }
  deliver_side_outputs();
}

void operator_chain::call_on_timer(size_t c, int64_t time,
                                   ops::time_domain d, row_batch& out) {
  auto& link = links_[c];
  auto before = out.rows;
  call(c, [&] { link.transform->on_timer(time, d, out); });
  if (out.times.size() < out.rows) {
    // Rows without an event time of their own take the timer's.
    out.times.resize(before, 0);
    out.times.resize(out.rows, time);
  }
}

void operator_chain::fire_timers(size_t c, ops::time_domain d, int64_t t,
                                 row_batch& out) {
  auto& timers = *links_[c].timers;
  std::optional<int64_t> due;
  call(c, [&] { due = timers.pop_due(d, t); });
  while (due) {
    call_on_timer(c, *due, d, out);
    call(c, [&] { due = timers.pop_due(d, t); });
  }
}

void operator_chain::fire_listed(size_t c, ops::time_domain d,
                                 const timer_list& listed, row_batch& out) {
  auto& timers = *links_[c].timers;
  for (auto& [time, key] : listed) {
    bool present = false;
    call(c, [&, &time = time, &key = key] { present = timers.take(d, time, key); });
    if (present)
      call_on_timer(c, time, d, out);
  }
  // Those the callbacks registered do not fire: one that re-registers
  // itself would never end.
  call(c, [&] { timers.clear(d); });
}

operator_chain::timer_list operator_chain::timers_of(size_t c,
                                                     ops::time_domain d) {
  timer_list out;
  call(c, [&] { out = links_[c].timers->all(d); });
  return out;
}

void operator_chain::fire_remaining_timers(size_t c, row_batch& out) {
  links_[c].timers->advance_watermark(std::numeric_limits<int64_t>::max());
  // Both lists as they are now: timers that event-time callbacks register
  // do not fire either.
  auto processing = timers_of(c, ops::time_domain::processing_time);
  fire_listed(c, ops::time_domain::event_time,
              timers_of(c, ops::time_domain::event_time), out);
  fire_listed(c, ops::time_domain::processing_time, processing, out);
}

std::optional<int64_t> operator_chain::next_processing_timer() {
  std::optional<int64_t> next;
  for (size_t c = 0; c < links_.size(); ++c) {
    if (!links_[c].timers)
      continue;
    std::optional<int64_t> t;
    call(c, [&] {
      t = links_[c].timers->earliest(ops::time_domain::processing_time);
    });
    if (t && (!next || *t < *next))
      next = t;
  }
  return next;
}

void operator_chain::on_processing_time(int64_t now) {
  for (size_t c = 0; c < links_.size(); ++c) {
    auto& link = links_[c];
    if (!link.timers)
      continue;
    row_batch fired(link.output);
    fire_timers(c, ops::time_domain::processing_time, now, fired);
    if (fired.rows > 0)
      pass_on(c, fired);
  }
  deliver_side_outputs();
}

void operator_chain::on_input_watermark(int64_t wm) {
  fire(0, makes_watermarks() ? assigner_ + 1 : links_.size(), wm);
}

void operator_chain::on_generated_watermark(int64_t wm) {
  fire(assigner_ + 1, links_.size(), wm);
  emit_mark(watermark_mark{wm, false});
}

void operator_chain::emit_mark(const watermark_mark& mark) {
  for (auto& g : gates_)
    g.emit_watermark(mark);
}

void operator_chain::deliver(row_batch& batch) {
  if (batch.rows > 0) {
    auto rows = static_cast<int64_t>(batch.rows);
    metrics_.records_out += rows;
    if (sink_) {
      auto c = links_.size() - 1;
      links_[c].rows_in += rows;
      links_[c].rows_out += rows;
      call(c, [&] { sink_->write(batch); });
      return;
    }
    for (auto& g : gates_)
      if (g.side_output().empty())
        g.emit(batch);
  }
  deliver_side_outputs();
}

void operator_chain::deliver_side_outputs() {
  for (auto& [name, batch] : side_batches_) {
    if (batch.rows == 0)
      continue;
    metrics_.records_out += static_cast<int64_t>(batch.rows);
    for (auto& g : gates_)
      if (g.side_output() == name)
        g.emit(batch);
    batch.clear();
  }
}

void operator_chain::finish(bool drain) {
  for (size_t c = 0; c < links_.size() && drain; ++c) {
    auto& link = links_[c];
    if (!link.transform)
      continue;
    row_batch tail(link.output);
    if (link.timers)
      fire_remaining_timers(c, tail);
    call(c, [&] { link.transform->finish(tail); });
    pass_on(c, tail);
  }
  deliver_side_outputs();
  for (auto& g : gates_)
    g.flush();
  if (sink_)
    call(links_.size() - 1, [&] { sink_->finish(); });
}

void operator_chain::abort() {
  if (sink_)
    sink_->abort();
}

io_metrics operator_chain::metrics() const {
  auto m = metrics_;
  for (auto& link : links_) {
    if (!link.transform)
      continue;
    auto n = link.transform->rows_skipped();
    if (n == 0)
      continue;
    m.records_skipped += n;
    if (m.skipped_note.empty())
      m.skipped_note = fmt::format("vertex '{}': {}", link.context.vertex_id,
                                   link.transform->skip_note());
  }
  for (auto& link : links_)
    m.vertices.push_back(vertex_metrics{link.context.vertex_id, link.rows_in,
                                        link.rows_out, link.counters});
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
    call(links_.size() - 1, [&] { sink_->prepare_commit(checkpoint); });
}

void operator_chain::commit(int64_t checkpoint) {
  if (sink_)
    call(links_.size() - 1, [&] { sink_->commit(checkpoint); });
}

void operator_chain::snapshot_written(int64_t id) {
  for (auto& link : links_)
    if (link.backend)
      link.backend->snapshot_written(id);
}

chain_snapshot operator_chain::snapshot(int64_t id, state::snapshot_kind kind) {
  chain_snapshot result;
  for (size_t i = 0; i < links_.size(); ++i) {
    std::string op_state;
    call(i, [&] { visit(i, [&](auto& op) { op_state = op.snapshot_state(); }); });
    auto& link = links_[i];
    auto& vertex = link.context.vertex_id;
    std::optional<int64_t> max_time;
    if (link.watermarks.enabled() && link.max_time != no_watermark)
      max_time = link.max_time;
    if (!link.backend) {
      if (!op_state.empty() || max_time)
        result.ready.emplace(vertex, state::encode_vertex_snapshot(
                                       {op_state, {}, max_time}));
      continue;
    }
    auto keyed = link.backend->snapshot(id, kind);
    if (!keyed.finish) {
      result.ready.emplace(vertex, state::encode_vertex_snapshot(
                                     {op_state, std::move(keyed.bytes),
                                      max_time}));
      continue;
    }
    result.deferred.emplace_back(
      vertex, [op_state, max_time, finish = std::move(keyed.finish)] {
        return state::encode_vertex_snapshot({op_state, finish(), max_time});
      });
  }
  return result;
}

} // namespace weir
