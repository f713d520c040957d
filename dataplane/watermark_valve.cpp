#include "dataplane/watermark_valve.hpp"

#include <algorithm>

namespace weir {

watermark_valve::watermark_valve(size_t channels) : channels_(channels) {
}

valve_change watermark_valve::on_mark(int32_t c, const watermark_mark& m) {
  if (c < 0 || static_cast<size_t>(c) >= channels_.size())
    return {};
  auto& ch = channels_[static_cast<size_t>(c)];
  if (ch.ended)
    return {};
  if (m.idle) {
    ch.idle = true;
    return update();
  }
  if (ch.idle) {
    ch.idle = false;
    ch.aligned = false; // back from idle: it counts once it caught up
  }
  ch.time = std::max(ch.time, m.time);
  if (ch.time >= current_)
    ch.aligned = true;
  return update();
}

valve_change watermark_valve::on_end(int32_t c) {
  if (c < 0 || static_cast<size_t>(c) >= channels_.size())
    return {};
  channels_[static_cast<size_t>(c)].ended = true;
  return update();
}

valve_change watermark_valve::update() {
  valve_change out;
  bool any_open = false;
  bool any_active = false;
  bool any_aligned = false;
  int64_t low = end_watermark;
  for (auto& ch : channels_) {
    if (ch.ended)
      continue;
    any_open = true;
    if (ch.idle)
      continue;
    any_active = true;
    if (!ch.aligned)
      continue;
    any_aligned = true;
    low = std::min(low, ch.time);
  }
  bool idle = any_open && !any_active;
  if (idle != idle_) {
    idle_ = idle;
    out.idle = idle;
  }
  // All open channels idle, or none caught up yet: the watermark stays
  // where it is. No open channel at all (every one ended): the end of
  // event time.
  if ((!any_open || any_aligned) && low > current_) {
    current_ = low;
    out.advanced = low;
  }
  return out;
}

} // namespace weir
