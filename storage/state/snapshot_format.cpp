#include "storage/state/snapshot_format.hpp"

#include <stdexcept>

#include "messages/binary_codec.hpp"
#include "messages/errors.hpp"
#include "messages/file_names.hpp"

namespace weir::state {

namespace {

constexpr std::string_view vertex_magic = "WEIRVS1:";
constexpr std::string_view canonical_magic = "WEIRKS1:";
constexpr std::string_view native_magic = "WEIRRDB1";

bool starts_with(const std::string& bytes, std::string_view magic) {
  return bytes.compare(0, magic.size(), magic) == 0;
}

} // namespace

std::string map_key_prefix(std::string_view key) {
  std::string out(4, '\0');
  auto n = static_cast<uint32_t>(key.size());
  for (int i = 0; i < 4; ++i)
    out[static_cast<size_t>(i)] = static_cast<char>((n >> (24 - 8 * i)) & 0xff);
  out.append(key.data(), key.size());
  return out;
}

std::string encode_vertex_snapshot(const vertex_snapshot& s) {
  std::string out{vertex_magic};
  append_text(out, s.operator_state);
  append_text(out, s.keyed_state);
  if (s.max_event_time)
    append_int64(out, *s.max_event_time);
  return out;
}

std::optional<vertex_snapshot> decode_vertex_snapshot(const std::string& bytes) {
  if (!starts_with(bytes, vertex_magic))
    return std::nullopt;
  binary_reader r{bytes, vertex_magic.size()};
  vertex_snapshot s;
  s.operator_state = r.text();
  s.keyed_state = r.text();
  if (!r.done())
    s.max_event_time = r.int64();
  if (!r.done())
    return std::nullopt;
  return s;
}

canonical_writer::canonical_writer(int64_t states) : out_{canonical_magic} {
  append_int64(out_, states);
}

void canonical_writer::begin_state(std::string_view name, state_type type,
                                   int64_t entries) {
  append_text(out_, name);
  append_int64(out_, static_cast<int64_t>(type));
  append_int64(out_, entries);
  // Two length prefixes and short keys and values per entry.
  out_.reserve(out_.size() + static_cast<size_t>(entries) * 48);
}

void canonical_writer::entry(std::string_view key, std::string_view value) {
  append_text(out_, key);
  append_text(out_, value);
}

bool is_canonical(const std::string& bytes) {
  return starts_with(bytes, canonical_magic);
}

void read_canonical(
  const std::string& bytes,
  const std::function<void(const std::string&, state_type, int64_t)>& on_state,
  const std::function<void(std::string&&, std::string&&)>& on_entry) {
  auto malformed = [] {
    throw std::runtime_error("keyed state is truncated or malformed");
  };
  if (!is_canonical(bytes))
    malformed();
  binary_reader r{bytes, canonical_magic.size()};
  auto states = r.int64();
  for (int64_t s = 0; r.ok && s < states; ++s) {
    auto name = r.text();
    auto type = r.int64();
    auto n = r.int64();
    if (!r.ok || (type != 0 && type != 1) || n < 0)
      malformed();
    on_state(name, static_cast<state_type>(type), n);
    for (int64_t i = 0; r.ok && i < n; ++i) {
      auto key = r.text();
      auto value = r.text();
      if (r.ok)
        on_entry(std::move(key), std::move(value));
    }
  }
  if (!r.done())
    malformed();
}

bool is_native(const std::string& bytes) {
  return starts_with(bytes, native_magic);
}

std::string encode_native(const native_handle& h) {
  std::string out{native_magic};
  append_int64(out, static_cast<int64_t>(h.files.size()));
  for (auto& [name, path] : h.files) {
    append_text(out, name);
    append_text(out, path);
  }
  return out;
}

native_handle decode_native(const std::string& bytes) {
  if (!is_native(bytes))
    throw std::runtime_error("not a RocksDB snapshot handle");
  binary_reader r{bytes, native_magic.size()};
  native_handle h;
  auto n = r.int64();
  for (int64_t i = 0; r.ok && i < n; ++i) {
    auto name = r.text();
    auto path = r.text();
    // A restore copies the file to <database directory>/<name>.
    if (r.ok && !is_file_name(name))
      throw std::runtime_error(
        describe(check_file_name("RocksDB snapshot file", name)));
    h.files.emplace_back(std::move(name), std::move(path));
  }
  if (!r.done() || n < 0)
    throw std::runtime_error("a RocksDB snapshot handle is truncated");
  return h;
}

std::vector<std::string> referenced_files(const std::string& bytes) {
  std::vector<std::string> paths;
  auto s = decode_vertex_snapshot(bytes);
  if (!s || !is_native(s->keyed_state))
    return paths;
  try {
    for (auto& [name, path] : decode_native(s->keyed_state).files)
      paths.push_back(path);
  } catch (const std::exception&) {
    paths.clear();
  }
  return paths;
}

} // namespace weir::state
