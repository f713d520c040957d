#include "actors/task_executor/input_queue.hpp"

namespace weir {

input_queue::input_queue(size_t channels)
  : ended_(channels, false), open_(channels) {
  // nop
}

input_event input_queue::pop() {
  auto ev = std::move(events_.front());
  events_.pop_front();
  return ev;
}

bool input_queue::end_channel(int32_t channel) {
  auto i = static_cast<size_t>(channel);
  if (channel < 0 || i >= ended_.size() || ended_[i])
    return false;
  ended_[i] = true;
  return --open_ == 0;
}

std::vector<owed_credit> input_queue::release() {
  std::vector<owed_credit> result;
  result.swap(owed_);
  return result;
}

} // namespace weir
