#include "storage/state_handle.hpp"

#include <filesystem>
#include <stdexcept>
#include <string_view>

#include <fmt/format.h>
#include <xxhash.h>

#include "messages/binary_codec.hpp"
#include "messages/errors.hpp"
#include "storage/files.hpp"
#include "storage/state/snapshot_format.hpp"

namespace weir::storage {

namespace {

constexpr std::string_view handle_magic = "WEIRSH1:";

uint64_t checksum_of(const std::string& bytes) {
  return XXH3_64bits(bytes.data(), bytes.size());
}

} // namespace

bool is_state_handle(const std::string& bytes) {
  return bytes.compare(0, handle_magic.size(), handle_magic) == 0;
}

std::string encode_state_handle(const state_handle& h) {
  std::string out{handle_magic};
  append_text(out, h.path);
  append_int64(out, h.size);
  append_int64(out, static_cast<int64_t>(h.checksum));
  return out;
}

std::optional<state_handle> decode_state_handle(const std::string& bytes) {
  if (!is_state_handle(bytes))
    return std::nullopt;
  binary_reader r{bytes, handle_magic.size()};
  state_handle h;
  h.path = r.text();
  h.size = r.int64();
  h.checksum = static_cast<uint64_t>(r.int64());
  if (!r.done() || h.size < 0)
    return std::nullopt;
  return h;
}

int64_t state_size(const std::string& bytes) {
  if (auto h = decode_state_handle(bytes))
    return h->size;
  return static_cast<int64_t>(bytes.size());
}

std::string offload_state(const std::string& path, std::string bytes) {
  if (bytes.size() <= inline_state_limit
      || !state::referenced_files(bytes).empty())
    return bytes;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path{path}.parent_path(),
                                      ec);
  if (auto err = write_durably(path, bytes))
    throw std::runtime_error(describe(err));
  return encode_state_handle(state_handle{
    path, static_cast<int64_t>(bytes.size()), checksum_of(bytes)});
}

std::string resolve_state(std::string bytes) {
  if (!is_state_handle(bytes))
    return bytes;
  auto h = decode_state_handle(bytes);
  if (!h)
    throw std::runtime_error("a state handle is truncated or malformed");
  auto data = read_whole_file(h->path);
  if (!data)
    throw std::runtime_error(describe(data.error()));
  if (static_cast<int64_t>(data->size()) != h->size
      || checksum_of(*data) != h->checksum)
    throw std::runtime_error(fmt::format(
      "state file '{}' differs from what the checkpoint recorded ({} bytes, "
      "checksum {:016x}; found {} bytes)",
      h->path, h->size, h->checksum, data->size()));
  return std::move(*data);
}

std::vector<std::string> state_files_of(const std::string& bytes) {
  if (auto h = decode_state_handle(bytes))
    return {h->path};
  return state::referenced_files(bytes);
}

} // namespace weir::storage
