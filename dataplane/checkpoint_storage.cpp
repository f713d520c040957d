#include "dataplane/checkpoint_storage.hpp"

#include <memory>
#include <utility>

#include <fmt/format.h>

#include "storage/state_handle.hpp"

namespace weir {

checkpoint_storage::checkpoint_storage(std::string job_dir, std::string owner)
  : job_dir_(std::move(job_dir)), owner_(std::move(owner)) {
}

std::string checkpoint_storage::file_of(int64_t id,
                                        const std::string& vertex) const {
  return fmt::format("{}/chk-{}.d/{}-{}.state", job_dir_, id, vertex, owner_);
}

void checkpoint_storage::offload(int64_t id, chain_snapshot& snap) const {
  if (!enabled())
    return;
  // Large ready states are written by the writer thread too: file I/O never
  // runs on the subtask's thread.
  for (auto i = snap.ready.begin(); i != snap.ready.end();) {
    if (i->second.size() <= storage::inline_state_limit) {
      ++i;
      continue;
    }
    auto bytes = std::make_shared<std::string>(std::move(i->second));
    snap.deferred.emplace_back(i->first, [bytes] { return std::move(*bytes); });
    i = snap.ready.erase(i);
  }
  for (auto& [vertex, finish] : snap.deferred)
    finish = [path = file_of(id, vertex), inner = std::move(finish)] {
      return storage::offload_state(path, inner());
    };
}

} // namespace weir
