#include "storage/memory_store.hpp"

#include <utility>
#include <vector>

namespace weir::storage {

caf::expected<std::optional<std::string>>
memory_store::get(column c, std::string_view key) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto& t = table_of(c);
  if (auto i = t.find(key); i != t.end())
    return std::optional<std::string>{i->second};
  return std::optional<std::string>{};
}

caf::error memory_store::put(column c, std::string_view key,
                             std::string_view value, durability) {
  std::lock_guard<std::mutex> guard{mtx_};
  table_of(c).insert_or_assign(std::string{key}, std::string{value});
  return caf::none;
}

caf::error memory_store::remove(column c, std::string_view key, durability) {
  std::lock_guard<std::mutex> guard{mtx_};
  auto& t = table_of(c);
  if (auto i = t.find(key); i != t.end())
    t.erase(i);
  return caf::none;
}

caf::error memory_store::write(const write_batch& batch, durability) {
  std::lock_guard<std::mutex> guard{mtx_};
  for (auto& op : batch.ops()) {
    auto& t = table_of(op.col);
    if (op.value)
      t.insert_or_assign(op.key, *op.value);
    else
      t.erase(op.key);
  }
  return caf::none;
}

caf::error memory_store::scan_prefix(column c, std::string_view prefix,
                                     const scan_callback& f) {
  // Copy the range first: the callback runs on a snapshot, without the lock,
  // and may write to this store (as with a RocksDB iterator).
  std::vector<std::pair<std::string, std::string>> snapshot;
  {
    std::lock_guard<std::mutex> guard{mtx_};
    auto& t = table_of(c);
    for (auto i = t.lower_bound(prefix);
         i != t.end() && std::string_view{i->first}.substr(0, prefix.size())
                           == prefix;
         ++i)
      snapshot.emplace_back(*i);
  }
  for (auto& [key, value] : snapshot)
    f(key, value);
  return caf::none;
}

} // namespace weir::storage
