#include "storage/blob_store.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <xxhash.h>

#include "messages/errors.hpp"
#include "storage/files.hpp"
#include "storage/job_graph_store.hpp"

namespace weir::storage {

namespace {

std::string key_of(const std::string& hash) {
  return "content/" + hash;
}

} // namespace

user_file read_user_file(const std::string& path) {
  user_file f;
  auto absolute = std::filesystem::absolute(path).lexically_normal();
  std::error_code ec;
  if (!std::filesystem::is_regular_file(absolute, ec)) {
    f.not_a_file = true;
    return f;
  }
  std::ifstream in{absolute, std::ios::binary};
  std::ostringstream bytes;
  bytes << in.rdbuf();
  if (!in) {
    f.read_error = std::strerror(errno);
    return f;
  }
  f.bytes = bytes.str();
  f.ref = blob_ref{absolute.filename().string(), content_hash(f.bytes),
                   absolute.string()};
  return f;
}

std::string content_hash(std::string_view bytes) {
  auto h = XXH3_128bits(bytes.data(), bytes.size());
  return fmt::format("{:016x}{:016x}", h.high64, h.low64);
}

caf::expected<std::string> file_hash(const std::string& path) {
  auto bytes = read_whole_file(path);
  if (!bytes)
    return bytes.error();
  return content_hash(*bytes);
}

caf::error blob_store::put(const std::string& hash, const std::string& bytes) {
  if (content_hash(bytes) != hash)
    return make_error(errc::invalid_job,
                      fmt::format("blob {}: its content has another hash",
                                  hash));
  return kv_.put(column::blobs, key_of(hash), bytes, durability::synced);
}

caf::expected<std::optional<std::string>>
blob_store::get(const std::string& hash) {
  return kv_.get(column::blobs, key_of(hash));
}

caf::error blob_store::remove_unreferenced(const std::vector<std::string>& hashes) {
  if (hashes.empty())
    return caf::none;
  auto graphs = job_graph_store{kv_}.load_all();
  if (!graphs)
    return graphs.error();
  std::set<std::string> used;
  for (auto& g : graphs->graphs) {
    for (auto& b : g.code.libraries)
      used.insert(b.hash);
    for (auto& b : g.code.files)
      used.insert(b.hash);
  }
  for (auto& h : hashes)
    if (used.count(h) == 0)
      if (auto err = kv_.remove(column::blobs, key_of(h), durability::synced))
        return err;
  return caf::none;
}

} // namespace weir::storage
