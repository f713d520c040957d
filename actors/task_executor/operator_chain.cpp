#include "actors/task_executor/operator_chain.hpp"

#include <fmt/format.h>

#include "operators/registry.hpp"

namespace weir {

operator_chain::operator_chain(const task_deployment& d,
                               const exchange_options& opts)
  : batch_records_(opts.batch_records) {
  auto& reg = ops::registry::builtin();
  bool has_inputs = !d.inputs.empty();
  bool has_outputs = !d.outputs.empty();
  for (size_t i = 0; i < d.chain.size(); ++i) {
    auto& v = d.chain[i];
    auto* f = reg.find(v.op);
    if (f == nullptr)
      throw ops::operator_error(
        fmt::format("vertex '{}': unknown operator '{}'", v.id, v.op));
    ops::operator_context ctx{d.job_name, v.id, d.subtask_index,
                              d.parallelism, d.bounded};
    contexts_.push_back(ctx);
    bool first = i == 0;
    bool last = i + 1 == d.chain.size();
    if (first && !has_inputs)
      source_ = f->make_source(v.params);
    else if (last && !has_outputs)
      sink_ = f->make_sink(v.params);
    else
      transforms_.push_back(f->make_transform(v.params));
  }
  for (auto& in : d.inputs)
    preaggregated_.push_back(in.preaggregated);
  for (auto& out : d.outputs)
    gates_.emplace_back(out, d.subtask_index, opts);
}

void operator_chain::open() {
  size_t next = 0;
  auto open_one = [&](auto& op) {
    auto& ctx = contexts_[next++];
    try {
      op.open(ctx);
    } catch (const std::exception& e) {
      throw ops::operator_error(
        fmt::format("vertex '{}': {}", ctx.vertex_id, e.what()));
    }
  };
  if (source_)
    open_one(*source_);
  for (auto& t : transforms_)
    open_one(*t);
  if (sink_)
    open_one(*sink_);
}

operator_chain::~operator_chain() = default;

bool operator_chain::blocking_io() const {
  return (source_ && source_->blocking_io()) || (sink_ && sink_->blocking_io());
}

bool operator_chain::run_source() {
  std::vector<record> batch;
  batch.reserve(batch_records_);
  bool more = source_->next(batch, batch_records_);
  metrics_.records_in += static_cast<int64_t>(batch.size());
  push(batch, 0, false);
  return more;
}

void operator_chain::process(size_t gate, std::vector<record>& batch) {
  metrics_.records_in += static_cast<int64_t>(batch.size());
  bool partial = gate < preaggregated_.size() && preaggregated_[gate];
  push(batch, 0, partial);
}

void operator_chain::push(std::vector<record>& batch, size_t first_transform,
                          bool partial) {
  for (size_t i = first_transform; i < transforms_.size(); ++i) {
    scratch_.clear();
    transforms_[i]->process(batch, scratch_, partial && i == first_transform);
    batch.swap(scratch_);
  }
  deliver(batch);
}

void operator_chain::deliver(std::vector<record>& batch) {
  if (batch.empty())
    return;
  metrics_.records_out += static_cast<int64_t>(batch.size());
  if (sink_) {
    sink_->write(batch);
    return;
  }
  for (size_t g = 0; g + 1 < gates_.size(); ++g) {
    auto copy = batch;
    gates_[g].emit(copy);
  }
  if (!gates_.empty())
    gates_.back().emit(batch);
}

void operator_chain::finish() {
  for (size_t i = 0; i < transforms_.size(); ++i) {
    std::vector<record> tail;
    transforms_[i]->finish(tail);
    push(tail, i + 1, false);
  }
  for (auto& g : gates_)
    g.flush();
  if (sink_)
    sink_->finish();
}

void operator_chain::abort() {
  if (sink_)
    sink_->abort();
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
    sink_->prepare_commit(checkpoint);
}

void operator_chain::commit(int64_t checkpoint) {
  if (sink_)
    sink_->commit(checkpoint);
}

operator_states operator_chain::snapshot() const {
  operator_states result;
  auto keep = [&](size_t ctx, std::string bytes) {
    if (!bytes.empty())
      result.emplace(contexts_[ctx].vertex_id, std::move(bytes));
  };
  size_t next = 0;
  if (source_)
    keep(next++, source_->snapshot_state());
  for (auto& t : transforms_)
    keep(next++, t->snapshot_state());
  if (sink_)
    keep(next++, sink_->snapshot_state());
  return result;
}

void operator_chain::restore(const operator_states& states) {
  for (auto& [vertex, bytes] : states) {
    size_t next = 0;
    bool found = false;
    auto apply = [&](auto& op) {
      if (contexts_[next++].vertex_id != vertex)
        return;
      found = true;
      try {
        op.restore_state(bytes);
      } catch (const std::exception& e) {
        throw ops::operator_error(
          fmt::format("vertex '{}': {}", vertex, e.what()));
      }
    };
    if (source_)
      apply(*source_);
    for (auto& t : transforms_)
      apply(*t);
    if (sink_)
      apply(*sink_);
    if (!found)
      throw ops::operator_error(fmt::format(
        "checkpointed state of vertex '{}' has no operator here", vertex));
  }
}

} // namespace weir
