#include "dataplane/input_queue.hpp"

namespace weir {

input_queue::input_queue(size_t channels)
  : order_(channels), ended_(channels, false), open_(channels) {
  // nop
}

void input_queue::push(int64_t seq, input_event ev) {
  auto channel = ev.channel;
  auto i = static_cast<size_t>(channel);
  if (channel < 0 || i >= order_.size())
    return;
  auto& o = order_[i];
  if (seq < o.next || o.early.count(seq) > 0)
    return; // a duplicate
  if (seq > o.next) {
    o.early.emplace(seq, std::move(ev));
    return;
  }
  events_.push_back(std::move(ev));
  ++o.next;
  for (auto e = o.early.find(o.next); e != o.early.end();
       e = o.early.find(o.next)) {
    events_.push_back(std::move(e->second));
    o.early.erase(e);
    ++o.next;
  }
  queue_end_when_complete(channel);
}

void input_queue::push_end(int32_t channel, int64_t events) {
  auto i = static_cast<size_t>(channel);
  if (channel < 0 || i >= order_.size())
    return;
  order_[i].total = events;
  queue_end_when_complete(channel);
}

void input_queue::queue_end_when_complete(int32_t channel) {
  auto& o = order_[static_cast<size_t>(channel)];
  if (!o.total || o.end_queued || o.next < *o.total)
    return;
  o.end_queued = true;
  input_event end;
  end.channel = channel;
  end.body = channel_end{};
  events_.push_back(std::move(end));
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

size_t input_queue::queued() const {
  size_t n = events_.size();
  for (auto& o : order_)
    n += o.early.size();
  return n;
}

std::vector<owed_credit> input_queue::release() {
  std::vector<owed_credit> result;
  result.swap(owed_);
  return result;
}

} // namespace weir
