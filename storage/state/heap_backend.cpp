#include "storage/state/heap_backend.hpp"

#include "storage/state/rocksdb_backend.hpp"
#include "storage/state/snapshot_format.hpp"

namespace weir::state {

/// A map state's entries on the heap, ordered so that one key's entries
/// are contiguous.
class heap_backend::ordered_column : public kv_column {
public:
  std::map<std::string, std::string, std::less<>> entries;

  bool get(std::string_view key, std::string& value) override {
    auto i = entries.find(key);
    if (i == entries.end())
      return false;
    value = i->second;
    return true;
  }
  void put(std::string_view key, std::string_view value) override {
    entries.insert_or_assign(std::string{key}, std::string{value});
  }
  void remove(std::string_view key) override {
    if (auto i = entries.find(key); i != entries.end())
      entries.erase(i);
  }
  void scan(std::string_view prefix,
            const std::function<void(std::string_view, std::string_view)>& f)
    override {
    for (auto i = entries.lower_bound(prefix);
         i != entries.end() && i->first.compare(0, prefix.size(), prefix) == 0;
         ++i)
      f(i->first, i->second);
  }
  void remove_prefix(std::string_view prefix) override {
    auto i = entries.lower_bound(prefix);
    while (i != entries.end() && i->first.compare(0, prefix.size(), prefix) == 0)
      i = entries.erase(i);
  }
};

heap_backend::heap_backend() = default;
heap_backend::~heap_backend() = default;

void heap_backend::claim(const std::string& name, state_type type,
                         heap_table_base& t) {
  auto i = stash_.find(name);
  if (i == stash_.end())
    return;
  if (i->second.type != type)
    throw std::runtime_error("restored state '" + name
                             + "' has another type than the operator's");
  for (auto& [k, v] : i->second.entries)
    t.load(std::move(k), v);
  stash_.erase(i);
}

kv_column& heap_backend::column(const std::string& name, state_type type) {
  auto& slot = columns_[name];
  if (!slot) {
    slot = std::make_unique<ordered_column>();
    if (auto i = stash_.find(name); i != stash_.end()) {
      if (i->second.type != type)
        throw std::runtime_error("restored state '" + name
                                 + "' has another type than the operator's");
      for (auto& [k, v] : i->second.entries)
        slot->entries.insert_or_assign(std::move(k), std::move(v));
      stash_.erase(i);
    }
  }
  return *slot;
}

void heap_backend::restore(const std::string& bytes) {
  if (is_native(bytes)) {
    // A RocksDB checkpoint restored on the heap: read it through RocksDB.
    restore(native_to_canonical(bytes));
    return;
  }
  stashed* current = nullptr;
  read_canonical(
    bytes,
    [&](const std::string& name, state_type type, int64_t n) {
      current = &stash_[name];
      current->type = type;
      current->entries.reserve(static_cast<size_t>(n));
    },
    [&](std::string&& k, std::string&& v) {
      current->entries.emplace_back(std::move(k), std::move(v));
    });
}

pending_snapshot heap_backend::snapshot(int64_t, snapshot_kind) {
  canonical_writer w{static_cast<int64_t>(tables_.size() + columns_.size()
                                          + stash_.size())};
  for (auto& [name, t] : tables_) {
    w.begin_state(name, state_type::value, t->size());
    t->dump(w);
  }
  for (auto& [name, c] : columns_) {
    w.begin_state(name, state_type::map,
                  static_cast<int64_t>(c->entries.size()));
    for (auto& [k, v] : c->entries)
      w.entry(k, v);
  }
  // Restored state nobody claimed (allowed with -n) is carried on.
  for (auto& [name, s] : stash_) {
    w.begin_state(name, s.type, static_cast<int64_t>(s.entries.size()));
    for (auto& [k, v] : s.entries)
      w.entry(k, v);
  }
  return {w.take(), {}};
}

std::vector<std::string> heap_backend::unclaimed() const {
  std::vector<std::string> names;
  for (auto& [name, s] : stash_)
    names.push_back(name);
  return names;
}

} // namespace weir::state
