#include "storage/state/rescale.hpp"

#include <map>
#include <stdexcept>
#include <utility>

#include "messages/binary_codec.hpp"
#include "storage/state/rocksdb_backend.hpp"
#include "storage/state/snapshot_format.hpp"

namespace weir::state {

namespace {

constexpr std::string_view rescaled_magic = "WEIRRSC1";

} // namespace

std::string encode_rescaled(const rescaled_state& s) {
  std::string out{rescaled_magic};
  append_int64(out, s.max_parallelism);
  append_int64(out, s.range.first);
  append_int64(out, s.range.last);
  append_int64(out, s.same_parallelism ? 1 : 0);
  append_int64(out, static_cast<int64_t>(s.old_subtasks.size()));
  for (auto& old : s.old_subtasks) {
    append_int64(out, old.keyed ? 1 : 0);
    append_text(out, old.bytes);
  }
  return out;
}

bool is_rescaled(const std::string& bytes) {
  return bytes.compare(0, rescaled_magic.size(), rescaled_magic) == 0;
}

std::optional<rescaled_state> decode_rescaled(const std::string& bytes) {
  if (!is_rescaled(bytes))
    return std::nullopt;
  binary_reader r{bytes, rescaled_magic.size()};
  rescaled_state s;
  s.max_parallelism = static_cast<int32_t>(r.int64());
  s.range.first = static_cast<int32_t>(r.int64());
  s.range.last = static_cast<int32_t>(r.int64());
  s.same_parallelism = r.int64() != 0;
  auto n = r.int64();
  if (!r.ok || s.max_parallelism < 1 || s.max_parallelism > 32768
      || s.range.first < 0 || s.range.last >= s.max_parallelism || n < 0
      || n > 1'000'000) // a parallelism savepoints can hold
    return std::nullopt;
  for (int64_t i = 0; r.ok && i < n; ++i) {
    rescaled_state::old_subtask old;
    old.keyed = r.int64() != 0;
    old.bytes = r.text();
    s.old_subtasks.push_back(std::move(old));
  }
  if (!r.done())
    return std::nullopt;
  return s;
}

std::string_view key_of_entry(const std::string& name, state_type type,
                              std::string_view store_key) {
  auto malformed = [&] {
    throw std::runtime_error("keyed state '" + name
                             + "' has an entry whose key is malformed");
  };
  if (name == event_timers_state || name == processing_timers_state) {
    if (store_key.size() < 8)
      malformed();
    return store_key.substr(8);
  }
  if (type == state_type::value)
    return store_key;
  // A map entry: the key's 4-byte big-endian length, the key, the user key.
  if (store_key.size() < 4)
    malformed();
  uint32_t n = 0;
  for (size_t i = 0; i < 4; ++i)
    n = (n << 8) | static_cast<unsigned char>(store_key[i]);
  if (store_key.size() - 4 < n)
    malformed();
  return store_key.substr(4, n);
}

std::string select_key_groups(const std::vector<std::string>& keyed_states,
                              key_group_range range,
                              const key_group_fn& group_of,
                              int32_t max_parallelism) {
  struct kept_state {
    state_type type;
    std::vector<std::pair<std::string, std::string>> entries;
  };
  std::map<std::string, kept_state> states;
  bool any = false;
  for (auto& bytes : keyed_states) {
    if (bytes.empty())
      continue;
    any = true;
    auto canonical = is_native(bytes)
                       ? native_range_to_canonical(bytes, range,
                                                   max_parallelism)
                       : bytes;
    kept_state* current = nullptr;
    std::string current_name;
    bool timers = false; // the current state is a timer queue
    read_canonical(
      canonical,
      [&](const std::string& name, state_type type, int64_t) {
        auto [i, fresh] = states.try_emplace(name, kept_state{type, {}});
        if (!fresh && i->second.type != type)
          throw std::runtime_error("keyed state '" + name
                                   + "' has two types in the old subtasks");
        current = &i->second;
        current_name = name;
        timers = name == event_timers_state || name == processing_timers_state;
      },
      [&](std::string&& key, std::string&& value) {
        auto k = key_of_entry(current_name, current->type, key);
        if ((timers && k.empty()) || range.contains(group_of(k)))
          current->entries.emplace_back(std::move(key), std::move(value));
      });
  }
  if (!any)
    return {};
  canonical_writer w{static_cast<int64_t>(states.size())};
  for (auto& [name, st] : states) {
    w.begin_state(name, st.type, static_cast<int64_t>(st.entries.size()));
    for (auto& [k, v] : st.entries)
      w.entry(k, v);
  }
  return w.take();
}

} // namespace weir::state
