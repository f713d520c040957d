#include "storage/checkpoint_store.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "messages/binary_codec.hpp"
#include "messages/errors.hpp"
#include "storage/state/snapshot_format.hpp"
#include "storage/detail/record_codec.hpp"
#include "storage/files.hpp"
#include "storage/state_handle.hpp"

namespace weir::storage {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view magic = "WEIRCHK3";
/// Checkpoints from before key groups: no max parallelism (read as such).
constexpr std::string_view legacy_magic = "WEIRCHK2";

/// The retained checkpoint ids of a job's record, oldest first.
std::vector<int64_t> retained_ids(const std::string& record) {
  std::vector<int64_t> ids;
  try {
    auto doc = nlohmann::json::parse(record);
    for (auto& x : doc.at("retained"))
      ids.push_back(x.get<int64_t>());
  } catch (const std::exception&) {
    ids.clear();
  }
  return ids;
}

constexpr std::string_view savepoint_magic = "WEIRSVP2";
constexpr std::string_view legacy_savepoint_magic = "WEIRSVP1";

/// Format 2 (3 for checkpoints) ends with each vertex's max parallelism.
void encode_max_parallelism(std::string& out, const savepoint_data& sp) {
  append_int64(out, static_cast<int64_t>(sp.max_parallelism.size()));
  for (auto& [vertex, n] : sp.max_parallelism) {
    append_text(out, vertex);
    append_int64(out, n);
  }
}

bool decode_max_parallelism(binary_reader& r, savepoint_data& sp) {
  auto n = r.int64();
  for (int64_t i = 0; r.ok && i < n; ++i) {
    auto vertex = r.text();
    auto groups = r.int64();
    if (groups < 1 || groups > 32768)
      return false;
    sp.max_parallelism[vertex] = static_cast<int32_t>(groups);
  }
  return r.ok && n >= 0;
}


void encode_vertices(std::string& out, const savepoint_data& sp) {
  append_int64(out, static_cast<int64_t>(sp.vertices.size()));
  for (auto& [vertex, subtasks] : sp.vertices) {
    append_text(out, vertex);
    append_int64(out, static_cast<int64_t>(subtasks.size()));
    for (auto& bytes : subtasks)
      append_text(out, bytes);
  }
}

bool decode_vertices(binary_reader& r, savepoint_data& sp) {
  auto n = r.int64();
  for (int64_t i = 0; r.ok && i < n; ++i) {
    auto vertex = r.text();
    auto parallelism = r.int64();
    if (parallelism < 0 || parallelism > 1'000'000)
      return false;
    auto& subtasks = sp.vertices[vertex];
    for (int64_t k = 0; r.ok && k < parallelism; ++k)
      subtasks.push_back(r.text());
  }
  return r.ok && n >= 0;
}

/// Whether `path` lies inside directory `dir`, as written (lexically).
bool lies_inside(const fs::path& dir, const std::string& path) {
  auto rel = fs::path{path}.lexically_normal().lexically_relative(
    dir.lexically_normal());
  return !rel.empty() && rel != "." && *rel.begin() != "..";
}

/// Every file the native (RocksDB) state of `cp` refers to.
std::set<std::string> referenced_files(const checkpoint_snapshot& cp) {
  std::set<std::string> files;
  for (auto& [vertex, subtasks] : cp.state.vertices)
    for (auto& bytes : subtasks)
      for (auto& f : state_files_of(bytes))
        files.insert(std::move(f));
  return files;
}

} // namespace

caf::error write_savepoint(const std::string& path, const savepoint_data& sp) {
  std::error_code ec;
  fs::create_directories(fs::path{path}.parent_path(), ec);
  // Piece by piece: a subtask's state whose handle the checkpoint holds is
  // read from its file here (a savepoint is self-contained), one at a time.
  durable_file out{path};
  std::string piece{savepoint_magic};
  append_int64(piece, static_cast<int64_t>(sp.vertices.size()));
  for (auto& [vertex, subtasks] : sp.vertices) {
    append_text(piece, vertex);
    append_int64(piece, static_cast<int64_t>(subtasks.size()));
    for (auto& bytes : subtasks) {
      std::string state;
      try {
        state = resolve_state(bytes);
      } catch (const std::exception& e) {
        return make_error(errc::storage_failure, e.what());
      }
      append_int64(piece, static_cast<int64_t>(state.size()));
      if (auto err = out.append(piece))
        return err;
      piece.clear();
      if (auto err = out.append(state))
        return err;
    }
  }
  encode_max_parallelism(piece, sp);
  if (auto err = out.append(piece))
    return err;
  return out.commit();
}

namespace {

/// Why `bytes` is not of `kind` in format `current` ("WEIRSVP1"): another
/// version of it (its number names which), or no such file at all.
std::string format_problem(const std::string& bytes,
                           std::string_view current, const char* kind,
                           const std::string& path) {
  auto family = current.substr(0, current.size() - 1);
  if (bytes.size() >= current.size()
      && bytes.compare(0, family.size(), family) == 0) {
    auto theirs = bytes[family.size()];
    auto ours = current.back();
    if (theirs > ours)
      return fmt::format("{}: a weir {} of format {}, newer than this weir "
                         "reads ({}): read it with a newer weir",
                         path, kind, theirs, ours);
    if (theirs < ours && theirs >= '0')
      return fmt::format("{}: a weir {} of format {}, older than this weir "
                         "reads ({})",
                         path, kind, theirs, ours);
  }
  return fmt::format("{}: not a weir {} or truncated", path, kind);
}

} // namespace

caf::expected<savepoint_data> read_savepoint(const std::string& path) {
  auto bytes = read_whole_file(path);
  if (!bytes)
    return bytes.error();
  // A retained checkpoint serves as well (`weir run -r`).
  if (bytes->compare(0, magic.size(), magic) == 0
      || bytes->compare(0, legacy_magic.size(), legacy_magic) == 0) {
    auto cp = decode_checkpoint(*bytes, path);
    if (!cp)
      return cp.error();
    return std::move(cp->state);
  }
  bool legacy = bytes->compare(0, legacy_savepoint_magic.size(),
                               legacy_savepoint_magic)
                == 0;
  if (!legacy
      && bytes->compare(0, savepoint_magic.size(), savepoint_magic) != 0) {
    // An old or new checkpoint is named as a checkpoint.
    auto chk = format_problem(*bytes, magic, "checkpoint", path);
    return make_error(errc::storage_failure,
                      chk.find(": a weir checkpoint of format") != std::string::npos
                        ? chk
                        : format_problem(*bytes, savepoint_magic, "savepoint",
                                         path));
  }
  binary_reader r{*bytes, savepoint_magic.size()};
  savepoint_data sp;
  if (!decode_vertices(r, sp) || (!legacy && !decode_max_parallelism(r, sp))
      || !r.done())
    return make_error(errc::storage_failure,
                      fmt::format("{}: not a weir savepoint or truncated", path));
  return sp;
}

std::string encode_checkpoint(const checkpoint_snapshot& cp) {
  std::string out{magic};
  append_int64(out, cp.id);
  encode_vertices(out, cp.state);
  encode_max_parallelism(out, cp.state);
  return out;
}

caf::expected<checkpoint_snapshot> decode_checkpoint(const std::string& bytes,
                                                     const std::string& what) {
  bool legacy = bytes.compare(0, legacy_magic.size(), legacy_magic) == 0;
  if (!legacy && bytes.compare(0, magic.size(), magic) != 0)
    return make_error(errc::storage_failure,
                      format_problem(bytes, magic, "checkpoint", what));
  binary_reader r{bytes, magic.size()};
  checkpoint_snapshot cp;
  cp.id = r.int64();
  if (!decode_vertices(r, cp.state)
      || (!legacy && !decode_max_parallelism(r, cp.state)) || !r.done())
    return make_error(errc::storage_failure,
                      fmt::format("{}: not a weir checkpoint or truncated", what));
  return cp;
}

checkpoint_store::checkpoint_store(kv_store& kv, std::string dir)
  : kv_(kv), dir_(std::move(dir)) {
}

std::string checkpoint_store::file_of(const job_id& job, int64_t id) const {
  return fmt::format("{}/{}/chk-{}", dir_, job.to_string(), id);
}

caf::expected<std::string>
checkpoint_store::put(const job_id& job, const checkpoint_snapshot& cp,
                      int32_t retained) {
  auto path = file_of(job, cp.id);
  std::error_code ec;
  fs::create_directories(fs::path{path}.parent_path(), ec);
  if (ec)
    return make_error(errc::storage_failure,
                      fmt::format("cannot create directory '{}': {}",
                                  fs::path{path}.parent_path().string(),
                                  ec.message()));
  if (auto err = write_durably(path, encode_checkpoint(cp)))
    return err;
  auto key = job.to_string();
  std::vector<int64_t> ids;
  auto old = kv_.get(column::checkpoints, key);
  if (!old)
    return old.error();
  if (*old)
    ids = retained_ids(**old);
  ids.push_back(cp.id);
  std::vector<int64_t> dropped;
  while (static_cast<int32_t>(ids.size()) > std::max(1, retained)) {
    dropped.push_back(ids.front());
    ids.erase(ids.begin());
  }
  auto doc = detail::new_record();
  doc["retained"] = ids;
  if (auto err = kv_.put(column::checkpoints, key, detail::dump_record(doc),
                         durability::synced))
    return err;
  drop(job, cp, ids, dropped);
  return path;
}

std::set<std::string> checkpoint_store::files_of(const job_id& job,
                                                 int64_t id) const {
  std::set<std::string> files;
  auto bytes = read_whole_file(file_of(job, id));
  if (!bytes)
    return files;
  auto cp = decode_checkpoint(*bytes, file_of(job, id));
  if (cp)
    files = referenced_files(*cp);
  return files;
}

void checkpoint_store::drop(const job_id& job, const checkpoint_snapshot& newest,
                            const std::vector<int64_t>& retained,
                            const std::vector<int64_t>& dropped) {
  std::error_code ec;
  if (!dropped.empty()) {
    // RocksDB state files are shared between incremental checkpoints: a
    // dropped checkpoint's file goes only if no retained one refers to it.
    auto keep = referenced_files(newest);
    for (auto id : retained)
      if (id != newest.id)
        keep.merge(files_of(job, id));
    // The paths came from subtasks' acknowledgements: only files in the
    // job's own directory are deleted, whatever a TaskExecutor claimed.
    auto job_root = fs::path{dir_} / job.to_string();
    for (auto id : dropped) {
      for (auto& f : files_of(job, id))
        if (keep.count(f) == 0 && lies_inside(job_root, f))
          fs::remove(f, ec);
      fs::remove(file_of(job, id), ec);
    }
  }
  // Directories of dropped checkpoints, and of older ones that never
  // completed (the newest subsumes them). Those only once older than the
  // checkpoint before the newest: a forced checkpoint (a savepoint) can
  // complete while the periodic one before it is still being written, and
  // its subtasks must not find their directory gone.
  auto job_dir = fs::path{file_of(job, newest.id)}.parent_path();
  std::set<int64_t> kept{retained.begin(), retained.end()};
  std::set<int64_t> gone{dropped.begin(), dropped.end()};
  int64_t previous = 0; // the newest completed checkpoint before `newest`
  for (auto id : retained)
    if (id != newest.id)
      previous = std::max(previous, id);
  for (auto id : dropped)
    previous = std::max(previous, id);
  for (fs::directory_iterator i{job_dir, ec}, end; !ec && i != end;
       i.increment(ec)) {
    auto name = i->path().filename().string();
    if (name.rfind("chk-", 0) != 0 || name.size() < 7
        || name.compare(name.size() - 2, 2, ".d") != 0)
      continue;
    auto id = std::strtoll(name.c_str() + 4, nullptr, 10);
    if (id > 0 && kept.count(id) == 0
        && (gone.count(id) > 0 || id < previous)) {
      std::error_code ignored;
      fs::remove_all(i->path(), ignored);
    }
  }
}

caf::expected<checkpoint_snapshot>
checkpoint_store::latest(const job_id& job, std::vector<std::string>& problems) {
  auto record = kv_.get(column::checkpoints, job.to_string());
  if (!record)
    return record.error();
  if (!*record)
    return checkpoint_snapshot{};
  auto ids = retained_ids(**record);
  for (auto i = ids.rbegin(); i != ids.rend(); ++i) {
    auto path = file_of(job, *i);
    std::ifstream in{path, std::ios::binary};
    if (!in) {
      problems.push_back(fmt::format("checkpoint {} of job {}: cannot read '{}'",
                                     *i, job.to_string(), path));
      continue;
    }
    std::ostringstream bytes;
    bytes << in.rdbuf();
    auto cp = decode_checkpoint(bytes.str(), path);
    if (!cp || cp->id != *i) {
      problems.push_back(fmt::format(
        "checkpoint {} of job {}: {}", *i, job.to_string(),
        cp ? "it holds another checkpoint" : describe(cp.error())));
      continue;
    }
    std::string missing;
    for (auto& f : referenced_files(*cp)) {
      std::error_code ec;
      if (!fs::is_regular_file(f, ec)) {
        missing = f;
        break;
      }
    }
    if (!missing.empty()) {
      problems.push_back(fmt::format("checkpoint {} of job {}: its state file "
                                     "'{}' is missing",
                                     *i, job.to_string(), missing));
      continue;
    }
    return cp;
  }
  return checkpoint_snapshot{};
}

} // namespace weir::storage
