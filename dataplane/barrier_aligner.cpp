#include "dataplane/barrier_aligner.hpp"

#include <utility>

namespace weir {

barrier_aligner::barrier_aligner(size_t channels)
  : arrived_(channels, false), ended_(channels, false) {
}

bool barrier_aligner::blocked(int32_t channel) const {
  auto c = static_cast<size_t>(channel);
  return pending_ && c < arrived_.size() && arrived_[c];
}

void barrier_aligner::hold(input_event ev) {
  held_.push_back(std::move(ev));
}

bool barrier_aligner::on_barrier(int32_t channel, int64_t id) {
  auto c = static_cast<size_t>(channel);
  if (c >= arrived_.size() || (pending_ && id < *pending_))
    return false; // unknown channel, or a barrier of an abandoned checkpoint
  if (!pending_ || id > *pending_) {
    arrived_.assign(arrived_.size(), false);
    pending_ = id;
  }
  arrived_[c] = true;
  return aligned();
}

bool barrier_aligner::on_end(int32_t channel) {
  auto c = static_cast<size_t>(channel);
  if (c >= ended_.size())
    return false;
  ended_[c] = true;
  return pending_ && aligned();
}

std::deque<input_event> barrier_aligner::release() {
  pending_.reset();
  arrived_.assign(arrived_.size(), false);
  return std::exchange(held_, {});
}

bool barrier_aligner::aligned() const {
  for (size_t c = 0; c < arrived_.size(); ++c)
    if (!arrived_[c] && !ended_[c])
      return false;
  return true;
}

} // namespace weir
