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
  void scan_from(std::string_view from,
                 const std::function<bool(std::string_view, std::string_view)>&
                   f) override {
    for (auto i = entries.lower_bound(from); i != entries.end(); ++i)
      if (!f(i->first, i->second))
        return;
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

namespace {

/// Below this many entries a snapshot is written at once: a thread would
/// cost more than it saves.
constexpr int64_t async_threshold = 64 * 1024;

} // namespace

pending_snapshot heap_backend::snapshot(int64_t, snapshot_kind) {
  int64_t entries = 0;
  bool frozen = false;
  for (auto& [name, t] : tables_) {
    entries += t->size();
    frozen = frozen || t->freeze_pending();
  }
  auto states = static_cast<int64_t>(tables_.size() + columns_.size()
                                     + stash_.size());
  // Map states and unclaimed restored state are copied now (small).
  auto write_rest = [columns = copy_columns(), stash = stash_](
                      canonical_writer& w) {
    for (auto& [name, entries] : columns) {
      w.begin_state(name, state_type::map,
                    static_cast<int64_t>(entries.size()));
      for (auto& [k, v] : entries)
        w.entry(k, v);
    }
    // Restored state nobody claimed (allowed with -n) is carried on.
    for (auto& [name, s] : stash) {
      w.begin_state(name, s.type, static_cast<int64_t>(s.entries.size()));
      for (auto& [k, v] : s.entries)
        w.entry(k, v);
    }
  };
  if (entries < async_threshold || frozen) {
    // Small, or an earlier snapshot is still being written: now.
    canonical_writer w{states};
    for (auto& [name, t] : tables_) {
      w.begin_state(name, state_type::value, t->size());
      t->dump(w);
    }
    write_rest(w);
    return {w.take(), {}};
  }
  std::vector<std::pair<std::string, std::shared_ptr<const frozen_table>>> views;
  for (auto& [name, t] : tables_)
    views.emplace_back(name, t->freeze());
  return {{}, [views, write_rest, states]() mutable {
            canonical_writer w{states};
            for (auto& [name, v] : views) {
              w.begin_state(name, state_type::value, v->size());
              v->dump(w);
            }
            write_rest(w);
            views.clear(); // the tables may fold their layers now
            return w.take();
          }};
}

void heap_backend::snapshot_written(int64_t) {
  for (auto& [name, t] : tables_)
    t->thaw();
}

std::map<std::string, std::map<std::string, std::string, std::less<>>>
heap_backend::copy_columns() const {
  std::map<std::string, std::map<std::string, std::string, std::less<>>> out;
  for (auto& [name, c] : columns_)
    out[name] = c->entries;
  return out;
}

std::vector<std::string> heap_backend::unclaimed() const {
  std::vector<std::string> names;
  for (auto& [name, s] : stash_)
    names.push_back(name);
  return names;
}

} // namespace weir::state
