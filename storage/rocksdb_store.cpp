#include "storage/rocksdb_store.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <system_error>

#include <fmt/format.h>
#include <rocksdb/env.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include "messages/errors.hpp"
#include "storage/detail/wal_format.hpp"
#include "storage/status.hpp"

namespace weir::storage {

namespace {

rocksdb::Slice slice(std::string_view x) {
  return rocksdb::Slice{x.data(), x.size()};
}

std::string_view view(const rocksdb::Slice& x) {
  return std::string_view{x.data(), x.size()};
}

rocksdb::WriteOptions write_options(durability d) {
  rocksdb::WriteOptions opts;
  opts.sync = d == durability::synced;
  return opts;
}

/// Our column families in `column` order, then every other family the
/// database already has ("default", and any a later version added): RocksDB
/// only opens a database when all of its families are named.
std::vector<rocksdb::ColumnFamilyDescriptor>
family_descriptors(const rocksdb::DBOptions& opts, const std::string& path) {
  std::vector<rocksdb::ColumnFamilyDescriptor> result;
  for (auto c : all_columns)
    result.emplace_back(to_string(c), rocksdb::ColumnFamilyOptions{});
  std::vector<std::string> existing;
  // A new database has no families yet: its failure to list them is expected,
  // and any real problem shows again when DB::Open runs.
  rocksdb::DB::ListColumnFamilies(opts, path, &existing).PermitUncheckedError();
  existing.emplace_back(rocksdb::kDefaultColumnFamilyName);
  for (auto& name : existing) {
    auto known = [&](const auto& d) { return d.name == name; };
    if (std::none_of(result.begin(), result.end(), known))
      result.emplace_back(name, rocksdb::ColumnFamilyOptions{});
  }
  return result;
}

/// RocksDB's info LOG, appended with plain write(2) calls whose errors are
/// ignored. RocksDB 7.8's own info logger (EnvLogger) asserts on the write
/// after a failed one (fixed upstream in 8.1, facebook/rocksdb#11314), and
/// Debian's librocksdb keeps assertions on: a full disk would abort the
/// process on RocksDB's next log line.
class info_log final : public rocksdb::Logger {
public:
  /// Moves an old `LOG` aside as `LOG.old.<micros>` (as RocksDB does, so
  /// that keep_log_file_num prunes them) and opens a new one; nullptr when
  /// that fails (RocksDB then tries itself and reports why).
  static std::shared_ptr<rocksdb::Logger> open(const std::string& dir) {
    auto path = dir + "/LOG";
    std::error_code ec;
    std::filesystem::create_directories(dir, ec); // a fresh state directory
    if (std::filesystem::exists(path, ec)) {
      auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
      std::filesystem::rename(path, fmt::format("{}.old.{}", path, micros), ec);
      if (ec)
        return nullptr;
    }
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
                    0644);
    if (fd < 0)
      return nullptr;
    return std::make_shared<info_log>(fd);
  }

  explicit info_log(int fd) : fd_(fd) {
    // nop
  }

  ~info_log() override {
    ::close(fd_);
  }

  using rocksdb::Logger::Logv;

  void Logv(const char* format, va_list ap) override {
    using namespace std::chrono;
    auto now = system_clock::now();
    auto secs = system_clock::to_time_t(now);
    auto micros = duration_cast<microseconds>(now.time_since_epoch()).count()
                  % 1000000;
    std::tm t{};
    localtime_r(&secs, &t);
    char stamp[40];
    std::strftime(stamp, sizeof(stamp), "%Y/%m/%d-%H:%M:%S", &t);
    std::string line = fmt::format("{}.{:06} ", stamp, micros);
    va_list copy;
    va_copy(copy, ap);
    auto n = std::vsnprintf(nullptr, 0, format, copy);
    va_end(copy);
    if (n > 0) {
      auto at = line.size();
      line.resize(at + static_cast<size_t>(n) + 1);
      std::vsnprintf(line.data() + at, static_cast<size_t>(n) + 1, format, ap);
      line.resize(at + static_cast<size_t>(n));
    }
    if (line.empty() || line.back() != '\n')
      line += '\n';
    // One write per line (O_APPEND): lines of RocksDB's threads never
    // interleave. A failed write loses the line, nothing else.
    [[maybe_unused]] auto written = ::write(fd_, line.data(), line.size());
  }

private:
  int fd_;
};

/// What to do about a damaged state directory (appended to its error).
std::string repair_hint(const std::string& path) {
  return fmt::format("weir repair-state --state-dir {} drops what is damaged "
                     "and reports it",
                     path);
}

/// Why opening `path` failed with `st` (a Corruption): the first damaged
/// record of its write-ahead log, found by reading the log ourselves
/// (RocksDB's error does not name the file).
caf::error corrupt_log_error(const std::string& path,
                             const rocksdb::Status& st) {
  for (auto& file : detail::wal_files(path)) {
    auto records = detail::read_wal(file);
    if (!records)
      continue;
    for (auto& r : *records)
      if (!r.intact)
        return make_error(errc::storage_corrupt,
                          fmt::format("{}: damaged write-ahead log {}: the "
                                      "record at byte {} ({} bytes): {}; {}",
                                      path, file, r.offset, r.size, r.problem,
                                      repair_hint(path)));
  }
  // The logs are intact: the MANIFEST (or a closed log it tracks) is not.
  // Only a backup, or RocksDB's own salvage of the table files, helps.
  auto err = to_error(st, path, "cannot open store");
  return make_error(errc::storage_corrupt,
                    fmt::format("{}; restore the state directory from a "
                                "backup, or salvage its table files with weir "
                                "repair-state --state-dir {} (RocksDB's "
                                "RepairDB; it keeps a copy of every file "
                                "first)",
                                describe(err), path));
}

/// A table file the store names is gone: no repair can say what it held.
bool missing_table_file(const rocksdb::Status& st) {
  auto text = st.ToString();
  return st.IsIOError() && text.find(".sst") != std::string::npos
         && text.find("No such file") != std::string::npos;
}

} // namespace

std::string store_files_problem(const std::string& path, bool& has_store) {
  namespace fs = std::filesystem;
  has_store = false;
  std::error_code ec;
  bool current = false;
  for (auto& e : fs::directory_iterator{path, ec}) {
    auto name = e.path().filename().string();
    if (name == "CURRENT")
      current = true;
    else if (name.rfind("MANIFEST-", 0) == 0 || name.rfind("OPTIONS-", 0) == 0
             || fs::path{name}.extension() == ".sst"
             || fs::path{name}.extension() == ".log")
      has_store = true;
  }
  if (!current)
    return has_store ? "RocksDB's CURRENT file is missing, though the store's "
                       "other files are there"
                     : std::string{};
  has_store = true;
  std::ifstream in{path + "/CURRENT"};
  std::string manifest;
  std::getline(in, manifest);
  if (manifest.rfind("MANIFEST-", 0) != 0
      || manifest.find('/') != std::string::npos)
    return "RocksDB's CURRENT file is damaged (it names no MANIFEST file)";
  if (!fs::exists(path + "/" + manifest, ec))
    return fmt::format("CURRENT names {}, which is missing", manifest);
  return {};
}

caf::expected<std::unique_ptr<rocksdb_store>>
rocksdb_store::open(std::string path) {
  // A store whose own files do not add up is refused before anything is
  // written: RocksDB would start an empty store beside its table files and
  // delete them as obsolete.
  bool has_store = false;
  if (auto problem = store_files_problem(path, has_store); !problem.empty())
    return make_error(errc::storage_corrupt,
                      fmt::format("{}: {}; nothing was changed: restore the "
                                  "state directory from a backup, or salvage "
                                  "its table files with weir repair-state "
                                  "--state-dir {} (RocksDB's RepairDB; it "
                                  "keeps a copy of every file first)",
                                  path, problem, path));
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec)
    return make_error(errc::storage_failure,
                      fmt::format("{}: cannot create directory: {}", path,
                                  ec.message()));
  rocksdb::DBOptions opts;
  opts.create_if_missing = !has_store;
  opts.create_missing_column_families = true;
  // Every open starts a new info LOG; keep a few old ones, not 1000.
  opts.keep_log_file_num = 10;
  opts.info_log = info_log::open(path);
  // Corruption is never silent: a damaged record in the middle of the
  // write-ahead log fails the open (RocksDB's default, point-in-time
  // recovery, would drop it and every later record without a word). A torn
  // last record, a crash during its write, was never acknowledged and is
  // still dropped.
  opts.wal_recovery_mode = rocksdb::WALRecoveryMode::kTolerateCorruptedTailRecords;
  opts.paranoid_checks = true;
  // The MANIFEST records each closed write-ahead log's size: one deleted or
  // cut at a record boundary fails the open instead of rolling the store
  // back without a word.
  opts.track_and_verify_wals_in_manifest = true;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* db = nullptr;
  auto st = rocksdb::DB::Open(opts, path, family_descriptors(opts, path),
                              &handles, &db);
  if (st.IsCorruption())
    return corrupt_log_error(path, st);
  if (missing_table_file(st))
    return make_error(errc::storage_corrupt,
                      fmt::format("{}: cannot open store: {}; a table file is "
                                  "missing: restore the state directory from "
                                  "a backup (a repair would drop its records "
                                  "without a trace)",
                                  path, st.ToString()));
  if (auto err = to_error(st, path, "cannot open store"))
    return err;
  std::unique_ptr<rocksdb_store> store{
    new rocksdb_store(std::move(path), std::unique_ptr<rocksdb::DB>{db},
                      std::move(handles))};
  // Every table file is read once and checked: a damaged one is found here,
  // with its name, rather than as a failing read of some job later. The
  // store holds job records and user libraries: megabytes, read in
  // milliseconds.
  st = store->db_->VerifyChecksum();
  if (!st.ok()) {
    // Unlike a log record, a table's damaged block takes an unknown set of
    // keys with it: there is no repair that could say what it drops.
    auto err = to_error(st, store->path_, "cannot open store");
    return make_error(errc::storage_corrupt,
                      describe(err) + "; a damaged table file: restore the "
                                      "state directory from a backup");
  }
  return store;
}

caf::error rocksdb_store::persist() {
  rocksdb::FlushOptions opts;
  opts.wait = true;
  auto st = db_->Flush(opts, handles_);
  return to_error(st, path_, "cannot flush the store");
}

std::string rocksdb_store::family_name(uint32_t id) const {
  for (auto* h : handles_)
    if (h->GetID() == id)
      return h->GetName();
  return fmt::format("column family {}", id);
}

rocksdb::DB& rocksdb_store::db() {
  return *db_;
}

rocksdb_store::rocksdb_store(std::string path, std::unique_ptr<rocksdb::DB> db,
                             std::vector<rocksdb::ColumnFamilyHandle*> handles)
  : path_(std::move(path)), db_(std::move(db)), handles_(std::move(handles)) {
  // nop
}

rocksdb_store::~rocksdb_store() {
  // Nothing to report to from a destructor: failures here lose no data,
  // because every acknowledged write was synced.
  for (auto* h : handles_)
    db_->DestroyColumnFamilyHandle(h).PermitUncheckedError();
  db_->Close().PermitUncheckedError();
}

caf::expected<std::optional<std::string>>
rocksdb_store::get(column c, std::string_view key) {
  std::string value;
  auto st = db_->Get(rocksdb::ReadOptions{}, handle(c), slice(key), &value);
  if (st.IsNotFound())
    return std::optional<std::string>{};
  if (auto err = to_error(st, path_, "get", key_name(c, key)))
    return err;
  return std::optional<std::string>{std::move(value)};
}

caf::error rocksdb_store::put(column c, std::string_view key,
                              std::string_view value, durability d) {
  auto st = db_->Put(write_options(d), handle(c), slice(key), slice(value));
  return to_error(st, path_, "put", key_name(c, key));
}

caf::error rocksdb_store::remove(column c, std::string_view key,
                                 durability d) {
  auto st = db_->Delete(write_options(d), handle(c), slice(key));
  return to_error(st, path_, "remove", key_name(c, key));
}

caf::error rocksdb_store::write(const write_batch& batch, durability d) {
  rocksdb::WriteBatch wb;
  rocksdb::Status st;
  for (auto& op : batch.ops()) {
    if (op.value)
      st = wb.Put(handle(op.col), op.key, *op.value);
    else
      st = wb.Delete(handle(op.col), op.key);
    auto err = to_error(st, path_, "add to batch", key_name(op.col, op.key));
    if (err)
      return err;
  }
  st = db_->Write(write_options(d), &wb);
  return to_error(st, path_, "write",
                  fmt::format("batch of {} changes", batch.ops().size()));
}

caf::error rocksdb_store::scan_prefix(column c, std::string_view prefix,
                                      const scan_callback& f) {
  // Without an explicit snapshot the iterator reads an implicit one taken
  // when it is created.
  std::unique_ptr<rocksdb::Iterator> it{
    db_->NewIterator(rocksdb::ReadOptions{}, handle(c))};
  for (it->Seek(slice(prefix));
       it->Valid() && it->key().starts_with(slice(prefix)); it->Next())
    f(view(it->key()), view(it->value()));
  return to_error(it->status(), path_, "scan", key_name(c, prefix));
}

bool manifest_damaged(const std::string& path) {
  // Listing the column families reads CURRENT and the whole MANIFEST, and
  // nothing else.
  std::vector<std::string> families;
  return rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions{}, path, &families)
    .IsCorruption();
}

bool rocksdb_store_locked(const std::string& path) {
  auto lock_path = path + "/LOCK";
  std::error_code ec;
  if (!std::filesystem::exists(lock_path, ec))
    return false;
  // A LOCK file this process may not write (a read-only file system, no
  // permission) is not a lease someone holds: open() reports why it fails.
  if (::access(lock_path.c_str(), W_OK) != 0)
    return false;
  rocksdb::FileLock* lock = nullptr;
  auto st = rocksdb::Env::Default()->LockFile(lock_path, &lock);
  if (!st.ok())
    return true;
  rocksdb::Env::Default()->UnlockFile(lock).PermitUncheckedError();
  return false;
}

caf::expected<std::unique_ptr<kv_store>> open_rocksdb_store(std::string path) {
  auto store = rocksdb_store::open(std::move(path));
  if (!store)
    return std::move(store.error());
  return std::unique_ptr<kv_store>{std::move(*store)};
}

} // namespace weir::storage
