#include "storage/ha/etcd_store.hpp"

#include <filesystem>
#include <map>
#include <set>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <xxhash.h>

#include "messages/errors.hpp"
#include "storage/files.hpp"

namespace weir::storage {

namespace fs = std::filesystem;

namespace {

/// The first line of every value file: its size and checksum, so that a
/// damaged or truncated file is named, never read as a value.
std::string header_of(std::string_view value) {
  return fmt::format("weir-value {} {:016x}\n", value.size(),
                     XXH3_64bits(value.data(), value.size()));
}

/// Syncs directory `dir`, so that the names of files renamed into it
/// survive a crash of the machine.
void sync_directory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0)
    return;
  ::fsync(fd);
  ::close(fd);
}

} // namespace

etcd_store::etcd_store(std::shared_ptr<etcd_client> etcd, std::string dir,
                       std::string prefix, etcd_fence fence)
  : etcd_(std::move(etcd)),
    dir_(std::move(dir)),
    prefix_(std::move(prefix)),
    fence_(std::move(fence)) {
}

caf::expected<std::unique_ptr<etcd_store>>
etcd_store::open(std::shared_ptr<etcd_client> etcd, std::string dir,
                 std::string prefix, etcd_fence fence) {
  for (auto c : all_columns) {
    std::error_code ec;
    fs::create_directories(fs::path{dir} / to_string(c), ec);
    if (ec)
      return make_error(errc::storage_failure,
                        fmt::format("cannot create {}: {}",
                                    (fs::path{dir} / to_string(c)).string(),
                                    ec.message()));
  }
  std::unique_ptr<etcd_store> store{new etcd_store(
    std::move(etcd), std::move(dir), std::move(prefix), std::move(fence))};
  if (auto err = store->collect_garbage())
    return err;
  return store;
}

std::string etcd_store::pointer(column c, std::string_view key) const {
  auto out = prefix_ + to_string(c) + "/";
  out.append(key);
  return out;
}

caf::expected<std::string>
etcd_store::read_value(const std::string& name) const {
  auto path = dir_ + "/" + name;
  auto bytes = read_whole_file(path);
  if (!bytes)
    return bytes.error();
  auto eol = bytes->find('\n');
  auto header = bytes->substr(0, eol == std::string::npos ? 0 : eol + 1);
  std::string_view value{*bytes};
  value.remove_prefix(header.size());
  if (header.empty() || header != header_of(value))
    return make_error(errc::storage_corrupt,
                      fmt::format("{} is damaged (its size or checksum does "
                                  "not match its header)",
                                  path));
  return std::string{value};
}

caf::expected<std::string> etcd_store::write_value(column c,
                                                   std::string_view value) {
  auto name = fmt::format("{}/{:020}-{:08}", to_string(c), fence_.revision,
                          next_file_++);
  durable_file file{dir_ + "/" + name};
  if (auto err = file.append(header_of(value)))
    return err;
  if (auto err = file.append(value))
    return err;
  if (auto err = file.commit())
    return err;
  return name;
}

caf::expected<std::optional<std::string>> etcd_store::get(column c,
                                                          std::string_view key) {
  auto found = etcd_->range(pointer(c, key));
  if (!found)
    return found.error();
  if (found->empty())
    return std::optional<std::string>{};
  auto value = read_value(found->front().value);
  if (!value)
    return value.error();
  return std::optional<std::string>{std::move(*value)};
}

caf::error etcd_store::put(column c, std::string_view key,
                           std::string_view value, durability d) {
  write_batch batch;
  batch.put(c, std::string{key}, std::string{value});
  return write(batch, d);
}

caf::error etcd_store::remove(column c, std::string_view key, durability d) {
  write_batch batch;
  batch.remove(c, std::string{key});
  return write(batch, d);
}

caf::error etcd_store::write(const write_batch& batch, durability d) {
  // The last change of each key wins.
  std::map<std::string, const write_op*> last;
  for (auto& op : batch.ops())
    last[pointer(op.col, op.key)] = &op;
  if (last.empty())
    return {};
  // The files that the pointers name now: removed once replaced.
  std::vector<etcd_op> reads;
  for (auto& [key, op] : last)
    reads.push_back(etcd_op{etcd_op::get, key, {}, 0, {}});
  auto before = etcd_->txn({}, reads);
  if (!before)
    return before.error();
  std::vector<std::string> written;
  std::vector<etcd_op> changes;
  std::set<std::string> dirs;
  for (auto& [key, op] : last) {
    if (!op->value) {
      changes.push_back(etcd_op{etcd_op::remove, key, {}, 0, {}});
      continue;
    }
    auto name = write_value(op->col, *op->value);
    if (!name) {
      for (auto& w : written)
        ::unlink((dir_ + "/" + w).c_str());
      return name.error();
    }
    written.push_back(*name);
    dirs.insert(dir_ + "/" + to_string(op->col));
    changes.push_back(etcd_op{etcd_op::put, key, *name, 0, {}});
  }
  if (d == durability::synced)
    for (auto& dir : dirs)
      sync_directory(dir);
  auto done = etcd_->txn({etcd_condition{fence_.key, fence_.revision}},
                         changes);
  if (!done) {
    // Maybe applied, maybe not: the new files stay until the next leader's
    // garbage collection knows.
    return done.error();
  }
  if (!done->succeeded) {
    for (auto& w : written)
      ::unlink((dir_ + "/" + w).c_str());
    return make_error(
      errc::storage_failure,
      fmt::format("refused the write of {}: this jobmanager is no longer the "
                  "leader (its etcd lease on {} ended)",
                  key_name(batch.ops().front().col, batch.ops().front().key),
                  fence_.key));
  }
  for (auto& entries : before->reads)
    for (auto& e : entries)
      ::unlink((dir_ + "/" + e.value).c_str());
  return {};
}

caf::error etcd_store::scan_prefix(column c, std::string_view prefix,
                                   const scan_callback& f) {
  auto from = pointer(c, prefix);
  auto entries = etcd_->range(from, etcd_client::prefix_end(from));
  if (!entries)
    return entries.error();
  auto strip = pointer(c, {}).size();
  for (auto& e : *entries) {
    auto value = read_value(e.value);
    if (!value && !fs::exists(dir_ + "/" + e.value)) {
      // Replaced since the read (by `f` itself, say): read it again.
      auto now = get(c, std::string_view{e.key}.substr(strip));
      if (!now)
        return now.error();
      if (!*now)
        continue;
      value = std::move(**now);
    }
    if (!value)
      return value.error();
    f(std::string_view{e.key}.substr(strip), *value);
  }
  return {};
}

caf::error etcd_store::collect_garbage() {
  auto entries = etcd_->range(prefix_, etcd_client::prefix_end(prefix_));
  if (!entries)
    return entries.error();
  std::set<std::string> named;
  for (auto& e : *entries)
    named.insert(e.value);
  for (auto c : all_columns) {
    std::error_code ec;
    for (auto& file : fs::directory_iterator{fs::path{dir_} / to_string(c), ec}) {
      auto name = to_string(c) + "/" + file.path().filename().string();
      if (named.count(name) == 0)
        fs::remove(file.path(), ec);
    }
  }
  return {};
}

} // namespace weir::storage
