#include "dataplane/network_buffers.hpp"

namespace weir {

int64_t buffers_needed(const task_deployment& d,
                       const network_buffer_options& opts) {
  int64_t need = 0;
  auto gates = opts.credits({});
  for (auto& in : d.inputs)
    need += int64_t{in.channels} * gates.exclusive_for(in.channels)
            + opts.floating_per_gate;
  for (auto& out : d.outputs)
    need += out.part == partitioning::forward ? 1 : out.consumers;
  return need;
}

bool network_buffer_pool::reserve(const allocation_id& alloc, int64_t need) {
  if (need > available())
    return false;
  reserved_ += need;
  by_alloc_[alloc] += need;
  return true;
}

void network_buffer_pool::release(const allocation_id& alloc) {
  auto i = by_alloc_.find(alloc);
  if (i == by_alloc_.end())
    return;
  reserved_ -= i->second;
  by_alloc_.erase(i);
}

} // namespace weir
