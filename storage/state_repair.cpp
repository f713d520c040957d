#include "storage/state_repair.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <utility>

#include <fmt/format.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include "messages/errors.hpp"
#include "storage/detail/wal_format.hpp"
#include "storage/files.hpp"
#include "storage/kv_store.hpp"
#include "storage/rocksdb_store.hpp"

namespace weir::storage {

namespace {

namespace fs = std::filesystem;

/// A damaged record and the log file it was in.
struct damaged_record {
  std::string file;
  detail::wal_record record;
};

/// One change of a write batch: family id, key, put or removal.
struct change {
  uint32_t family = 0;
  std::string key;
  bool put = true;
};

/// The changes of a write batch, as far as they can be read (a damaged
/// batch may end early); `complete` says whether all of it could.
std::vector<change> changes_of(const std::string& batch, bool& complete) {
  struct collector : rocksdb::WriteBatch::Handler {
    std::vector<change> out;
    rocksdb::Status PutCF(uint32_t cf, const rocksdb::Slice& key,
                          const rocksdb::Slice&) override {
      out.push_back({cf, key.ToString(), true});
      return rocksdb::Status::OK();
    }
    rocksdb::Status DeleteCF(uint32_t cf, const rocksdb::Slice& key) override {
      out.push_back({cf, key.ToString(), false});
      return rocksdb::Status::OK();
    }
    rocksdb::Status SingleDeleteCF(uint32_t cf,
                                   const rocksdb::Slice& key) override {
      return DeleteCF(cf, key);
    }
  } c;
  complete = false;
  if (batch.size() < 12)
    return {};
  rocksdb::WriteBatch wb{batch};
  complete = wb.Iterate(&c).ok();
  return std::move(c.out);
}

/// Copies `file` into `lost` (a new name if one is there already).
caf::error keep_copy(const std::string& file, const fs::path& lost) {
  std::error_code ec;
  fs::create_directories(lost, ec);
  auto target = lost / fs::path{file}.filename();
  for (int n = 1; fs::exists(target, ec); ++n)
    target = lost / fmt::format("{}.{}", fs::path{file}.filename().string(), n);
  fs::copy_file(file, target, ec);
  if (ec)
    return make_error(errc::storage_failure,
                      fmt::format("cannot copy '{}' to '{}': {}", file,
                                  target.string(), ec.message()));
  return caf::none;
}

/// Rewrites every damaged log file of `dir` without its damaged records;
/// returns those.
caf::expected<std::vector<damaged_record>>
drop_damaged_records(const std::string& dir,
                     std::map<std::pair<uint32_t, std::string>, uint64_t>&
                       last_kept) {
  std::vector<damaged_record> damaged;
  for (auto& file : detail::wal_files(dir)) {
    auto records = detail::read_wal(file);
    if (!records)
      return records.error();
    std::vector<detail::wal_record> intact;
    for (auto& r : *records) {
      if (!r.intact) {
        damaged.push_back({file, r});
        continue;
      }
      bool complete = false;
      for (auto& c : changes_of(r.batch, complete))
        last_kept[{c.family, c.key}] = detail::batch_sequence(r.batch);
      intact.push_back(std::move(r));
    }
    if (intact.size() == records->size())
      continue;
    if (auto err = keep_copy(file, fs::path{dir} / "lost"))
      return err;
    if (auto err = write_durably(file, detail::encode_wal(intact)))
      return err;
  }
  return damaged;
}

/// "put job_results/<key> (…)": a dropped change and what the store has for
/// its key now.
std::string describe_change(rocksdb_store& store, const change& c,
                            uint64_t sequence,
                            const std::map<std::pair<uint32_t, std::string>,
                                           uint64_t>& last_kept) {
  auto family = store.family_name(c.family);
  auto name = family + "/" + printable(c.key);
  std::string now;
  auto later = last_kept.find({c.family, c.key});
  if (later != last_kept.end() && later->second > sequence) {
    now = "a later write of it is kept";
  } else {
    auto col = std::find_if(all_columns.begin(), all_columns.end(),
                            [&](column x) { return to_string(x) == family; });
    auto value = col == all_columns.end() ? caf::expected<std::optional<
                                              std::string>>{std::nullopt}
                                          : store.get(*col, c.key);
    if (!value)
      now = "its value cannot be read: " + describe(value.error());
    else
      now = *value ? "an earlier value of it is kept" : "it is absent now";
  }
  return fmt::format("{} {} ({})", c.put ? "put" : "remove", name, now);
}

caf::expected<repair_report> salvage(const std::string& dir,
                                     const std::string& problem, bool dry_run);

caf::expected<repair_report> repair_in(const std::string& dir,
                                       const std::string& shown_dir,
                                       bool dry_run) {
  std::map<std::pair<uint32_t, std::string>, uint64_t> last_kept;
  auto damaged = drop_damaged_records(dir, last_kept);
  if (!damaged)
    return damaged.error();
  // Intact logs and a damaged MANIFEST: RocksDB's RepairDB rebuilds it
  // from the table files.
  if (damaged->empty() && manifest_damaged(dir))
    return dry_run ? salvage(shown_dir, "its MANIFEST is damaged", true)
                   : salvage(dir, "its MANIFEST is damaged", false);
  auto store = rocksdb_store::open(dir);
  if (!store)
    return store.error();
  repair_report report;
  if (!damaged->empty())
    report.lost_dir = shown_dir + "/lost";
  for (auto& d : *damaged) {
    auto& r = d.record;
    bool complete = false;
    auto changes = changes_of(r.batch, complete);
    auto sequence = detail::batch_sequence(r.batch);
    std::string held;
    for (auto& c : changes)
      held += (held.empty() ? "" : ", ")
              + describe_change(**store, c, sequence, last_kept);
    if (held.empty())
      held = "no change can be read";
    else if (!complete)
      held += ", and more that cannot be read";
    auto file = shown_dir + "/" + fs::path{d.file}.filename().string();
    report.dropped.push_back(
      fmt::format("{} bytes {}-{} ({}): sequence {}: {}", file, r.offset,
                  r.offset + r.size, r.problem, sequence, held));
  }
  return report;
}

/// Rebuilds CURRENT and the MANIFEST of `dir` from its table files and
/// logs with RocksDB's RepairDB, every file copied to `dir/lost/` first.
caf::expected<repair_report> salvage(const std::string& dir,
                                     const std::string& problem, bool dry_run) {
  repair_report report;
  report.salvaged = problem;
  if (dry_run)
    return report;
  std::error_code ec;
  auto lost = fs::path{dir} / "lost";
  for (auto& e : fs::directory_iterator{dir, ec})
    if (e.is_regular_file(ec))
      if (auto err = keep_copy(e.path().string(), lost))
        return err;
  report.lost_dir = lost.string();
  rocksdb::Options opts;
  opts.create_missing_column_families = true;
  auto st = rocksdb::RepairDB(dir, opts);
  if (!st.ok())
    return make_error(errc::storage_failure,
                      fmt::format("{}: RocksDB's RepairDB failed: {}", dir,
                                  st.ToString()));
  auto store = rocksdb_store::open(dir);
  if (!store)
    return store.error();
  return report;
}

} // namespace

caf::expected<repair_report> repair_state_dir(const std::string& dir,
                                              bool dry_run) {
  std::error_code ec;
  bool has_store = false;
  auto problem = store_files_problem(dir, has_store);
  if (!has_store)
    return make_error(errc::storage_failure,
                      fmt::format("{} is not a state directory (it has no "
                                  "RocksDB files)",
                                  dir));
  if (rocksdb_store_locked(dir))
    return make_error(errc::storage_locked,
                      fmt::format("{}: another process holds it ({}/LOCK); "
                                  "stop its jobmanager first",
                                  dir, dir));
  if (!problem.empty())
    return salvage(dir, problem, dry_run);
  if (!dry_run)
    return repair_in(dir, dir, false);
  auto copy = fs::temp_directory_path(ec)
              / fmt::format("weir-repair-check-{}", ::getpid());
  fs::remove_all(copy, ec);
  fs::copy(dir, copy, fs::copy_options::recursive, ec);
  if (ec)
    return make_error(errc::storage_failure,
                      fmt::format("cannot copy {} to {} for a dry run: {}", dir,
                                  copy.string(), ec.message()));
  auto report = repair_in(copy.string(), dir, true);
  fs::remove_all(copy, ec);
  if (report)
    report->lost_dir.clear();
  return report;
}

} // namespace weir::storage
