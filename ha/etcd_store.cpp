#include "ha/etcd_store.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <xxhash.h>

#include "messages/errors.hpp"
#include "storage/files.hpp"

namespace weir::ha {

using namespace storage; // an implementation of storage::kv_store

namespace fs = std::filesystem;

namespace {

/// Value files are named `<column>/<leader revision, 20 digits>-<number, 8
/// digits>`: unique across leaders, and telling which leader wrote them.
constexpr size_t revision_digits = 20;
constexpr size_t number_digits = 8;

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

bool all_digits(std::string_view text) {
  for (auto ch : text)
    if (!std::isdigit(static_cast<unsigned char>(ch)))
      return false;
  return !text.empty();
}

/// The leader revision in a value file's base name, as its 20 digits (""
/// when it has none): zero-padded, they compare as the numbers do.
std::string_view writer_of(std::string_view base) {
  if (base.size() < revision_digits
      || !all_digits(base.substr(0, revision_digits)))
    return {};
  return base.substr(0, revision_digits);
}

} // namespace

etcd_store::etcd_store(std::shared_ptr<etcd_client> etcd, std::string dir,
                       std::string prefix, etcd_fence fence,
                       std::function<void(const std::string&)> fenced)
  : etcd_(std::move(etcd)),
    dir_(std::move(dir)),
    prefix_(std::move(prefix)),
    fence_(std::move(fence)),
    fenced_(std::move(fenced)) {
}

caf::expected<std::unique_ptr<etcd_store>>
etcd_store::open(std::shared_ptr<etcd_client> etcd, std::string dir,
                 std::string prefix, etcd_fence fence,
                 std::function<void(const std::string&)> fenced) {
  for (auto c : all_columns) {
    std::error_code ec;
    fs::create_directories(fs::path{dir} / to_string(c), ec);
    if (ec)
      return make_error(errc::storage_failure,
                        fmt::format("cannot create {}: {}",
                                    (fs::path{dir} / to_string(c)).string(),
                                    ec.message()));
  }
  std::unique_ptr<etcd_store> store{
    new etcd_store(std::move(etcd), std::move(dir), std::move(prefix),
                   std::move(fence), std::move(fenced))};
  if (auto err = store->collect_garbage())
    return err;
  return store;
}

std::string etcd_store::pointer(column c, std::string_view key) const {
  auto out = prefix_ + to_string(c) + "/";
  out.append(key);
  return out;
}

bool etcd_store::value_file(column c, const std::string& name) {
  auto dir = to_string(c) + "/";
  if (name.compare(0, dir.size(), dir) != 0)
    return false;
  std::string_view base{name};
  base.remove_prefix(dir.size());
  return base.size() == revision_digits + 1 + number_digits
         && all_digits(base.substr(0, revision_digits))
         && base[revision_digits] == '-'
         && all_digits(base.substr(revision_digits + 1));
}

std::string etcd_store::usability_problem(etcd_client& etcd,
                                          const std::string& dir,
                                          const std::string& prefix) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    return fmt::format("'{}' is no directory this jobmanager can create: {}",
                       dir, ec ? ec.message() : "it is a file");
  // Writable: a file made and removed (what the leader does with values).
  auto probe = fmt::format("{}/.weir-probe-{}", dir, ::getpid());
  {
    std::ofstream out{probe};
    out << "probe";
    if (!out.flush())
      return fmt::format("cannot write in '{}': {}", dir,
                         std::strerror(errno));
  }
  fs::remove(probe, ec);
  auto pointers = etcd.range(prefix, etcd_client::prefix_end(prefix));
  if (!pointers)
    return {}; // etcd itself: the campaign waits for it and says so
  size_t named_files = 0;
  size_t found = 0;
  std::string missing;
  for (auto& p : *pointers) {
    bool named = std::any_of(all_columns.begin(), all_columns.end(),
                             [&](column c) { return value_file(c, p.value); });
    if (!named)
      continue; // not a value file: damage the leader reports by key
    ++named_files;
    if (fs::exists(fs::path{dir} / p.value, ec))
      ++found;
    else if (missing.empty())
      missing = dir + "/" + p.value;
  }
  if (named_files > 0 && found == 0)
    return fmt::format("none of the {} files etcd names under {} is in '{}' "
                       "(first: {}): is this the directory the other "
                       "jobmanagers use, and is it mounted?",
                       named_files, prefix, dir, missing);
  return {};
}

caf::expected<std::string> etcd_store::read_value(column c,
                                                  std::string_view key,
                                                  const std::string& name) const {
  if (!value_file(c, name))
    return make_error(errc::storage_corrupt,
                      fmt::format("the etcd pointer of {} names '{}', which "
                                  "is not a value file of this store",
                                  key_name(c, key), name.substr(0, 200)));
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
  auto name = fmt::format("{}/{:0{}}-{:0{}}", to_string(c), fence_.revision,
                          revision_digits, next_file_++, number_digits);
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
  auto value = read_value(c, key, found->front().value);
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

caf::error etcd_store::refused(const write_batch& batch) {
  auto why = fmt::format("this jobmanager is no longer the leader (its etcd "
                         "lease on {} ended)",
                         fence_.key);
  if (fenced_)
    fenced_(why);
  return make_error(errc::storage_failure,
                    fmt::format("refused the write of {}: {}",
                                key_name(batch.ops().front().col,
                                         batch.ops().front().key),
                                why));
}

caf::error etcd_store::write(const write_batch& batch, durability d) {
  // The last change of each key wins.
  std::map<std::string, const write_op*> last;
  for (auto& op : batch.ops())
    last[pointer(op.col, op.key)] = &op;
  if (last.empty())
    return {};
  // The pointers now: their revisions condition the swap, their files go
  // once it is done.
  std::vector<etcd_op> reads;
  for (auto& [key, op] : last)
    reads.push_back(etcd_op{etcd_op::get, key});
  auto before = etcd_->txn({}, reads);
  if (!before)
    return before.error();
  std::vector<etcd_condition> when{etcd_condition{fence_.key, fence_.revision}};
  std::vector<std::string> replaced;
  size_t i = 0;
  for (auto& [key, op] : last) {
    auto& now = before->reads[i++];
    when.push_back(etcd_condition{key, now.empty() ? 0 : now.front().mod_revision,
                                  true});
    if (!now.empty() && value_file(op->col, now.front().value))
      replaced.push_back(now.front().value);
  }
  std::vector<std::string> written;
  auto forget_written = [&] {
    for (auto& w : written)
      ::unlink((dir_ + "/" + w).c_str());
  };
  std::vector<etcd_op> changes;
  std::set<std::string> dirs;
  for (auto& [key, op] : last) {
    if (!op->value) {
      changes.push_back(etcd_op{etcd_op::remove, key});
      continue;
    }
    auto name = write_value(op->col, *op->value);
    if (!name) {
      forget_written();
      return name.error();
    }
    written.push_back(*name);
    dirs.insert(dir_ + "/" + to_string(op->col));
    changes.push_back(etcd_op{etcd_op::put, key, *name});
  }
  if (d == durability::synced)
    for (auto& dir : dirs)
      sync_directory(dir);
  auto done = etcd_->txn(when, changes);
  if (!done && done.error() == make_error(errc::timeout)) {
    // Sent but not answered: the first change tells whether it was applied
    // (file names are unique).
    auto& first = changes.front();
    auto now = etcd_->range(first.key);
    if (!now)
      return done.error(); // unknown: the files stay for the next leader
    bool applied = first.what == etcd_op::put
                     ? !now->empty() && now->front().value == first.value
                     : now->empty();
    if (!applied) {
      forget_written();
      return done.error();
    }
  } else if (!done) {
    forget_written();
    return done.error();
  } else if (!done->succeeded) {
    forget_written();
    auto leader = etcd_->range(fence_.key);
    if (leader && (leader->empty()
                   || leader->front().create_revision != fence_.revision))
      return refused(batch);
    return make_error(errc::storage_failure,
                      fmt::format("the write of {} found its keys changed "
                                  "since it read them",
                                  key_name(batch.ops().front().col,
                                           batch.ops().front().key)));
  }
  for (auto& r : replaced)
    ::unlink((dir_ + "/" + r).c_str());
  return {};
}

caf::error etcd_store::scan_prefix(column c, std::string_view prefix,
                                   const scan_callback& f) {
  return scan_values(c, prefix, f, nullptr);
}

caf::error etcd_store::scan_readable(column c, const scan_callback& f,
                                     const unreadable_callback& bad) {
  return scan_values(c, {}, f, &bad);
}

caf::error etcd_store::scan_values(column c, std::string_view prefix,
                                   const scan_callback& f,
                                   const unreadable_callback* bad) {
  auto from = pointer(c, prefix);
  auto entries = etcd_->range(from, etcd_client::prefix_end(from));
  if (!entries)
    return entries.error();
  auto strip = pointer(c, {}).size();
  // Every value first: the callbacks may write, and must not see it.
  std::vector<std::pair<std::string, std::string>> values;
  for (auto& e : *entries) {
    auto key = std::string_view{e.key}.substr(strip);
    auto value = read_value(c, key, e.value);
    if (value)
      values.emplace_back(std::string{key}, std::move(*value));
    else if (bad != nullptr)
      (*bad)(key, value.error());
    else
      return value.error();
  }
  for (auto& [key, value] : values)
    f(key, value);
  return {};
}

caf::error etcd_store::collect_garbage() {
  auto entries = etcd_->range(prefix_, etcd_client::prefix_end(prefix_));
  if (!entries)
    return entries.error();
  std::set<std::string> named;
  for (auto& e : *entries)
    named.insert(e.value);
  auto own = fmt::format("{:0{}}", fence_.revision, revision_digits);
  for (auto c : all_columns) {
    std::error_code ec;
    for (auto& file : fs::directory_iterator{fs::path{dir_} / to_string(c), ec}) {
      auto base = file.path().filename().string();
      // Only files of earlier leaders: a later one (this process stopped
      // past its lease meanwhile) writes files this listing cannot know.
      auto writer = writer_of(base);
      if (writer.empty() || writer >= own)
        continue;
      if (named.count(to_string(c) + "/" + base) == 0)
        fs::remove(file.path(), ec);
    }
  }
  return {};
}

} // namespace weir::ha
