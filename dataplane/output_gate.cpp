#include "dataplane/output_gate.hpp"

#include <xxhash.h>

#include "operators/aggregation.hpp"

namespace weir {

namespace {

size_t approx_bytes(const record& r) {
  return r.key.size() + r.text.size() + 24;
}

} // namespace

output_gate::output_gate(const output_desc& desc, int32_t producer_index,
                         const exchange_options& opts)
  : desc_(desc), opts_(opts) {
  bool forward = desc.part == partitioning::forward;
  channel_ = desc.channel_base + (forward ? 0 : producer_index);
  // A forward output has one consumer, so one lane: lanes per consumer of
  // every producer would grow with the square of the parallelism.
  lanes_.resize(forward ? 1 : static_cast<size_t>(desc.consumers));
  if (forward) {
    targets_.push_back(producer_index);
  } else {
    for (int32_t i = 0; i < desc.consumers; ++i)
      targets_.push_back(i);
  }
  for (auto t : targets_)
    lane_of(t).credit = opts.initial_credit;
  // Rebalance starts at a different consumer per producer, so that many
  // producers with few records do not all load consumer 0.
  next_rebalance_ = static_cast<size_t>(producer_index);
  if (!desc.combine.empty())
    combiner_ = std::make_unique<ops::keyed_aggregation>(
      ops::parse_aggregation_kind(desc.combine).value());
}

output_gate::~output_gate() = default;
output_gate::output_gate(output_gate&&) noexcept = default;
output_gate& output_gate::operator=(output_gate&&) noexcept = default;

void output_gate::emit(std::vector<record>& records) {
  if (combiner_) {
    for (auto& r : records)
      combiner_->add(std::move(r), false);
    if (combiner_->size() >= opts_.combiner_keys)
      drain_combiner();
    return;
  }
  for (auto& r : records)
    route(std::move(r));
}

void output_gate::drain_combiner() {
  std::vector<record> partials;
  combiner_->drain(partials);
  for (auto& r : partials)
    route(std::move(r));
}

void output_gate::route(record&& r) {
  switch (desc_.part) {
    case partitioning::forward:
      append(lanes_.front(), std::move(r));
      break;
    case partitioning::hash: {
      auto h = XXH3_64bits(r.key.data(), r.key.size());
      append(lanes_[h % lanes_.size()], std::move(r));
      break;
    }
    case partitioning::rebalance:
      append(lanes_[next_rebalance_++ % lanes_.size()], std::move(r));
      break;
    case partitioning::broadcast:
      for (size_t i = 0; i + 1 < lanes_.size(); ++i)
        append(lanes_[i], record{r});
      append(lanes_.back(), std::move(r));
      break;
  }
}

void output_gate::append(lane& l, record&& r) {
  if (l.open.empty())
    l.open.reserve(opts_.batch_records);
  l.open_bytes += approx_bytes(r);
  l.open.push_back(std::move(r));
  if (l.open.size() >= opts_.batch_records || l.open_bytes >= opts_.batch_bytes)
    close(l);
}

void output_gate::close(lane& l) {
  if (l.open.empty())
    return;
  l.closed.emplace_back(record_batch{std::move(l.open)});
  l.open = {};
  l.open_bytes = 0;
}

void output_gate::flush() {
  if (combiner_)
    drain_combiner();
  for (auto& l : lanes_)
    close(l);
}

void output_gate::emit_barrier(const checkpoint_barrier& barrier) {
  flush();
  for (auto t : targets_)
    lane_of(t).closed.emplace_back(barrier);
}

void output_gate::add_credit(int32_t consumer, int32_t n) {
  bool known = desc_.part == partitioning::forward
                 ? consumer == targets_.front()
                 : consumer >= 0 && static_cast<size_t>(consumer) < lanes_.size();
  if (known)
    lane_of(consumer).credit += n;
}

bool output_gate::backlogged() const {
  for (auto t : targets_)
    if (!lanes_[lane_index(t)].closed.empty())
      return true;
  return false;
}

bool output_gate::has_open_data() const {
  if (combiner_ && combiner_->size() > 0)
    return true;
  for (auto t : targets_)
    if (!lanes_[lane_index(t)].open.empty())
      return true;
  return false;
}

bool output_gate::empty() const {
  return !backlogged() && !has_open_data();
}

} // namespace weir
