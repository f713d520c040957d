#include "storage/state/rocksdb_backend.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <stdexcept>

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>
#include <rocksdb/db.h>
#include <rocksdb/utilities/checkpoint.h>
#include <rocksdb/write_batch.h>

#include "storage/state/snapshot_format.hpp"

namespace weir::state {

namespace {

namespace fs = std::filesystem;

[[noreturn]] void fail(const std::string& what, const rocksdb::Status& s) {
  throw std::runtime_error(fmt::format("RocksDB state: {}: {}", what,
                                       s.ToString()));
}

/// RocksDB's info log would go to the database directory; weir reports
/// what matters itself.
class quiet_logger : public rocksdb::Logger {
public:
  using rocksdb::Logger::Logv;
  void Logv(const char*, va_list) override {}
};

std::string random_tag() {
  std::random_device rd;
  std::mt19937_64 gen{(static_cast<uint64_t>(rd()) << 32) ^ rd()};
  return fmt::format("{:016x}", gen());
}

/// Copies `from` to `to` and syncs it: a checkpoint that completed must
/// survive a crash of the machine.
void copy_durably(const std::string& from, const std::string& to) {
  int in = ::open(from.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0)
    throw std::runtime_error(fmt::format("cannot read '{}': {}", from,
                                         std::strerror(errno)));
  int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (out < 0) {
    auto err = errno;
    ::close(in);
    throw std::runtime_error(fmt::format("cannot create '{}': {}", to,
                                         std::strerror(err)));
  }
  std::string buf(1 << 20, '\0');
  std::string problem;
  for (;;) {
    auto n = ::read(in, buf.data(), buf.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0) {
      problem = fmt::format("cannot read '{}': {}", from, std::strerror(errno));
      break;
    }
    if (n == 0)
      break;
    ssize_t done = 0;
    while (done < n) {
      auto w = ::write(out, buf.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR)
        continue;
      if (w < 0) {
        problem = fmt::format("cannot write '{}': {}", to, std::strerror(errno));
        break;
      }
      done += w;
    }
    if (!problem.empty())
      break;
  }
  if (problem.empty() && ::fsync(out) != 0)
    problem = fmt::format("cannot sync '{}': {}", to, std::strerror(errno));
  ::close(in);
  ::close(out);
  if (!problem.empty()) {
    ::unlink(to.c_str());
    throw std::runtime_error(problem);
  }
}

std::string cf_name(const std::string& name, state_type type) {
  return (type == state_type::map ? "map/" : "value/") + name;
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size()
         && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The column family that marks a database whose keyed states' keys carry
/// their key group, and the number of groups: "meta/key-groups/128".
constexpr std::string_view key_groups_marker = "meta/key-groups/";

bool is_marker(const std::string& cf) {
  return cf.rfind(key_groups_marker, 0) == 0;
}

/// Timer queues keep a time before the key, and are read in time order:
/// their keys carry no key group.
bool is_timer_queue(const std::string& plain) {
  return plain == event_timers_state || plain == processing_timers_state;
}

/// A key group as the 2-byte big-endian prefix of a key.
std::string group_prefix(int32_t group) {
  return {static_cast<char>((group >> 8) & 0xff),
          static_cast<char>(group & 0xff)};
}

int32_t group_of_prefix(std::string_view key) {
  return (static_cast<unsigned char>(key[0]) << 8)
         | static_cast<unsigned char>(key[1]);
}

class rocksdb_column : public kv_column {
public:
  /// `group_of` non-null: keys are stored behind their key group.
  rocksdb_column(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf,
                 std::string name, state_type type,
                 const key_group_fn* group_of)
    : db_(db), cf_(cf), name_(std::move(name)), type_(type),
      group_of_(group_of) {
    write_.disableWAL = true;
  }

  bool get(std::string_view key, std::string& value) override {
    auto s = db_->Get(read_, cf_, stored(key), &value);
    if (s.IsNotFound())
      return false;
    if (!s.ok())
      fail("get", s);
    return true;
  }
  void put(std::string_view key, std::string_view value) override {
    auto s = db_->Put(write_, cf_, stored(key),
                      rocksdb::Slice{value.data(), value.size()});
    if (!s.ok())
      fail("put", s);
  }
  void remove(std::string_view key) override {
    auto s = db_->Delete(write_, cf_, stored(key));
    if (!s.ok())
      fail("delete", s);
  }
  /// Grouped keys: a prefix that holds a whole key (a map's entries of one
  /// key) is in one group; any other prefix is looked for in every group,
  /// which come in group order.
  void scan(std::string_view prefix,
            const std::function<void(std::string_view, std::string_view)>& f)
    override {
    if (group_of_ == nullptr || !whole_key(prefix)) {
      each_from(group_of_ == nullptr ? std::string{prefix} : std::string{},
                [&](std::string_view k, std::string_view v) {
                  if (k.substr(0, prefix.size()) != prefix)
                    return group_of_ != nullptr; // the next group may match
                  f(k, v);
                  return true;
                });
      return;
    }
    auto p = stored(prefix).ToString();
    each_from(p, [&](std::string_view k, std::string_view v) {
      if (k.substr(0, prefix.size()) != prefix)
        return false;
      f(k, v);
      return true;
    });
  }
  void scan_from(std::string_view from,
                 const std::function<bool(std::string_view, std::string_view)>&
                   f) override {
    if (group_of_ == nullptr) {
      each_from(std::string{from}, f);
      return;
    }
    if (whole_key(from)) {
      // From a key's entry on (an interval join's buffer of that key): in
      // byte order within the key's group, which holds all of that key.
      auto start = stored(from).ToString();
      auto group = start.substr(0, 2);
      std::unique_ptr<rocksdb::Iterator> it{db_->NewIterator(read_, cf_)};
      for (it->Seek(start); it->Valid() && it->key().starts_with(group);
           it->Next()) {
        auto k = it->key();
        if (!f(std::string_view{k.data() + 2, k.size() - 2},
               std::string_view{it->value().data(), it->value().size()}))
          return;
      }
      if (!it->status().ok())
        fail("scan", it->status());
      return;
    }
    // Keys in byte order across groups (not used by timer queues, which
    // carry no groups).
    std::vector<std::pair<std::string, std::string>> entries;
    each_from({}, [&](std::string_view k, std::string_view v) {
      if (k >= from)
        entries.emplace_back(k, v);
      return true;
    });
    std::sort(entries.begin(), entries.end());
    for (auto& [k, v] : entries)
      if (!f(k, v))
        return;
  }
  void remove_prefix(std::string_view prefix) override {
    std::vector<std::string> keys;
    scan(prefix, [&](std::string_view k, std::string_view) {
      keys.emplace_back(k);
    });
    for (auto& k : keys)
      remove(k);
  }

private:
  /// The key as stored: behind its key group when keys are grouped (in a
  /// buffer valid until the next call; no copy otherwise).
  rocksdb::Slice stored(std::string_view key) {
    if (group_of_ == nullptr)
      return {key.data(), key.size()};
    auto k = key_of_entry(name_, type_, key);
    if (!last_group_ || k != last_key_) {
      last_key_.assign(k.data(), k.size());
      last_group_ = (*group_of_)(k);
    }
    stored_.clear(); // keeps its capacity
    stored_.append(group_prefix(*last_group_));
    stored_.append(key.data(), key.size());
    return stored_;
  }

  /// Whether `prefix` holds a whole key of a map state (map_key_prefix),
  /// whose entries are all in that key's group.
  bool whole_key(std::string_view prefix) const {
    if (type_ != state_type::map || prefix.size() < 4)
      return false;
    uint32_t n = 0;
    for (size_t i = 0; i < 4; ++i)
      n = (n << 8) | static_cast<unsigned char>(prefix[i]);
    return prefix.size() - 4 >= n;
  }

  /// Calls `f` with the entries from stored key `from` on, their keys
  /// without a group, until it returns false.
  void each_from(const std::string& from,
                 const std::function<bool(std::string_view, std::string_view)>&
                   f) {
    std::unique_ptr<rocksdb::Iterator> it{db_->NewIterator(read_, cf_)};
    size_t skip = group_of_ == nullptr ? 0 : 2;
    for (it->Seek(rocksdb::Slice{from.data(), from.size()}); it->Valid();
         it->Next()) {
      auto k = it->key();
      if (k.size() < skip)
        continue;
      if (!f(std::string_view{k.data() + skip, k.size() - skip},
             std::string_view{it->value().data(), it->value().size()}))
        break;
    }
    if (!it->status().ok())
      fail("scan", it->status());
  }

  rocksdb::DB* db_;
  rocksdb::ColumnFamilyHandle* cf_;
  std::string name_;
  state_type type_;
  const key_group_fn* group_of_;
  std::string last_key_;
  std::optional<int32_t> last_group_;
  std::string stored_;
  rocksdb::ReadOptions read_;
  rocksdb::WriteOptions write_;
};

} // namespace

struct rocksdb_backend::impl {
  rocksdb_backend_options opts;
  std::string tag = random_tag();
  rocksdb::DB* db = nullptr;
  std::map<std::string, rocksdb::ColumnFamilyHandle*> families; // by cf name
  std::map<std::string, std::unique_ptr<rocksdb_column>> columns;
  std::set<std::string> restored;
  /// Whether the keyed states' keys carry their key group (a database
  /// from before key-group prefixes does not), and how many groups.
  bool grouped = false;
  int32_t groups = 0;
  /// SST files already in the checkpoint directory (name → path), reused
  /// by incremental checkpoints. Upload threads update it.
  std::mutex uploaded_mtx;
  std::map<std::string, std::string> uploaded;

  std::string db_dir() const { return opts.local_dir + "/db"; }

  rocksdb::Options options() const {
    rocksdb::Options o;
    o.create_if_missing = true;
    o.create_missing_column_families = true;
    o.info_log = std::make_shared<quiet_logger>();
    o.keep_log_file_num = 1;
    // Nothing is kept between runs: closing needs no flush.
    o.avoid_flush_during_shutdown = true;
    return o;
  }

  void open(const std::vector<std::string>& cf_names) {
    std::vector<rocksdb::ColumnFamilyDescriptor> descs;
    descs.emplace_back(rocksdb::kDefaultColumnFamilyName,
                       rocksdb::ColumnFamilyOptions{});
    for (auto& n : cf_names)
      if (n != rocksdb::kDefaultColumnFamilyName)
        descs.emplace_back(n, rocksdb::ColumnFamilyOptions{});
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    auto s = rocksdb::DB::Open(rocksdb::DBOptions{options()}, db_dir(), descs,
                               &handles, &db);
    if (!s.ok())
      fail("cannot open '" + db_dir() + "'", s);
    for (size_t i = 0; i < descs.size(); ++i)
      families[descs[i].name] = handles[i];
  }

  void ensure_open() {
    if (db == nullptr) {
      std::error_code ec;
      fs::create_directories(opts.local_dir, ec);
      if (ec)
        throw std::runtime_error(fmt::format(
          "cannot create the state directory '{}' "
          "(taskmanager.state.local.root-dirs): {}",
          opts.local_dir, ec.message()));
      open({});
      if (opts.group_of && opts.max_parallelism > 0) {
        grouped = true;
        groups = opts.max_parallelism;
        family(fmt::format("{}{}", key_groups_marker, groups));
      }
    }
  }

  /// Notes a restored database's key-group marker, if it has one.
  void note_marker(const std::vector<std::string>& names) {
    for (auto& n : names)
      if (is_marker(n)) {
        grouped = true;
        groups = std::atoi(n.c_str() + key_groups_marker.size());
      }
  }

  /// Whether the keys of state `plain` carry their key group.
  bool grouped_state(const std::string& plain) const {
    return grouped && !is_timer_queue(plain);
  }

  rocksdb::ColumnFamilyHandle* family(const std::string& name) {
    ensure_open();
    if (auto i = families.find(name); i != families.end())
      return i->second;
    rocksdb::ColumnFamilyHandle* h = nullptr;
    auto s = db->CreateColumnFamily(rocksdb::ColumnFamilyOptions{}, name, &h);
    if (!s.ok())
      fail("cannot create state '" + name + "'", s);
    families[name] = h;
    return h;
  }

  ~impl() {
    if (db != nullptr) {
      for (auto& [name, h] : families)
        db->DestroyColumnFamilyHandle(h);
      db->Close();
      delete db;
    }
    std::error_code ec;
    fs::remove_all(opts.local_dir, ec);
  }

  /// The canonical bytes of the database as of `snap` (keys without
  /// their groups); with `range`, of the keyed states only the entries of
  /// those key groups (the database must be grouped).
  std::string canonical(const rocksdb::Snapshot* snap,
                        std::optional<key_group_range> range = {}) {
    rocksdb::ReadOptions ro;
    ro.snapshot = snap;
    int64_t states = 0;
    for (auto& [name, h] : families)
      states += name != rocksdb::kDefaultColumnFamilyName && !is_marker(name);
    canonical_writer w{states};
    for (auto& [name, h] : families) {
      if (name == rocksdb::kDefaultColumnFamilyName || is_marker(name))
        continue;
      auto type = name.rfind("map/", 0) == 0 ? state_type::map : state_type::value;
      auto plain = name.substr(name.find('/') + 1);
      auto skip = grouped_state(plain) ? size_t{2} : size_t{0};
      auto from = skip > 0 && range ? group_prefix(range->first) : std::string{};
      auto in_range = [&](const rocksdb::Slice& k) {
        return skip == 0 || !range
               || (k.size() >= 2 && group_of_prefix({k.data(), 2}) <= range->last);
      };
      std::unique_ptr<rocksdb::Iterator> it{db->NewIterator(ro, h)};
      int64_t n = 0;
      for (it->Seek(from); it->Valid() && in_range(it->key()); it->Next())
        ++n;
      w.begin_state(plain, type, n);
      for (it->Seek(from); it->Valid() && in_range(it->key()); it->Next()) {
        auto k = it->key();
        if (k.size() < skip)
          throw std::runtime_error("RocksDB state: a key of state '" + plain
                                   + "' has no key group");
        w.entry(std::string_view{k.data() + skip, k.size() - skip},
                std::string_view{it->value().data(), it->value().size()});
      }
      if (!it->status().ok())
        fail("cannot read state '" + plain + "'", it->status());
    }
    return w.take();
  }

  /// Copies the files of a RocksDB checkpoint in `local` to the checkpoint
  /// directory; returns the handle that names them.
  std::string upload(const std::string& local, int64_t id, bool reuse) {
    auto own = fmt::format("{}/chk-{}.d/{}-{}", opts.checkpoint_dir, id,
                           opts.owner, tag);
    auto shared = opts.checkpoint_dir + "/shared";
    std::error_code ec;
    fs::create_directories(own, ec);
    if (!ec && reuse)
      fs::create_directories(shared, ec);
    if (ec)
      throw std::runtime_error(fmt::format(
        "cannot create '{}' (execution.checkpointing.dir): {}", own,
        ec.message()));
    native_handle h;
    std::map<std::string, std::string> now_uploaded;
    for (auto& entry : fs::directory_iterator{local}) {
      auto name = entry.path().filename().string();
      std::string path;
      if (reuse && ends_with(name, ".sst")) {
        {
          std::lock_guard<std::mutex> guard{uploaded_mtx};
          if (auto i = uploaded.find(name); i != uploaded.end())
            path = i->second;
        }
        if (path.empty()) {
          path = fmt::format("{}/{}-{}-{}", shared, opts.owner, tag, name);
          copy_durably(entry.path().string(), path);
        }
        now_uploaded[name] = path;
      } else {
        path = own + "/" + name;
        copy_durably(entry.path().string(), path);
      }
      h.files.emplace_back(name, path);
    }
    fs::remove_all(local, ec);
    if (reuse) {
      std::lock_guard<std::mutex> guard{uploaded_mtx};
      for (auto& [name, path] : now_uploaded)
        uploaded[name] = path;
    }
    return encode_native(h);
  }
};

rocksdb_backend::rocksdb_backend(rocksdb_backend_options opts)
  : impl_(std::make_shared<impl>()) {
  impl_->opts = std::move(opts);
}

rocksdb_backend::~rocksdb_backend() = default;

kv_column& rocksdb_backend::column(const std::string& name, state_type type) {
  auto full = cf_name(name, type);
  auto& slot = impl_->columns[full];
  if (!slot) {
    auto* family = impl_->family(full); // opens the database if need be
    const key_group_fn* groups = nullptr;
    if (impl_->grouped_state(name)) {
      if (!impl_->opts.group_of)
        throw std::runtime_error("RocksDB state: its keys carry key groups, "
                                 "and the operator has no key");
      groups = &impl_->opts.group_of;
    }
    slot = std::make_unique<rocksdb_column>(impl_->db, family, name, type,
                                            groups);
  }
  impl_->restored.erase(full);
  return *slot;
}

void rocksdb_backend::restore(const std::string& bytes) {
  auto& d = *impl_;
  if (d.db != nullptr)
    throw std::runtime_error("RocksDB state: restore after first use");
  if (is_native(bytes)) {
    auto h = decode_native(bytes);
    std::error_code ec;
    fs::create_directories(d.db_dir(), ec);
    if (ec)
      throw std::runtime_error(fmt::format(
        "cannot create the state directory '{}' "
        "(taskmanager.state.local.root-dirs): {}",
        d.db_dir(), ec.message()));
    auto own_shared = d.opts.checkpoint_dir.empty()
                        ? std::string{}
                        : d.opts.checkpoint_dir + "/shared/";
    for (auto& [name, path] : h.files) {
      copy_durably(path, d.db_dir() + "/" + name);
      // Files of this job's own checkpoints are shared on; another job's
      // are copied, as that job may delete them.
      if (!own_shared.empty() && path.rfind(own_shared, 0) == 0)
        d.uploaded[name] = path;
    }
    std::vector<std::string> names;
    auto s = rocksdb::DB::ListColumnFamilies(rocksdb::DBOptions{d.options()},
                                             d.db_dir(), &names);
    if (!s.ok())
      fail("cannot read the restored database", s);
    d.open(names);
    d.note_marker(names);
    for (auto& n : names)
      if (n != rocksdb::kDefaultColumnFamilyName && !is_marker(n))
        d.restored.insert(n);
    return;
  }
  d.ensure_open();
  rocksdb::WriteBatch batch;
  rocksdb::ColumnFamilyHandle* current = nullptr;
  rocksdb::WriteOptions wo;
  wo.disableWAL = true;
  auto flush = [&] {
    auto s = d.db->Write(wo, &batch);
    if (!s.ok())
      fail("cannot restore", s);
    batch.Clear();
  };
  std::string current_name;
  state_type current_type = state_type::value;
  bool grouped = false;
  read_canonical(
    bytes,
    [&](const std::string& name, state_type type, int64_t) {
      auto full = cf_name(name, type);
      current = d.family(full);
      d.restored.insert(full);
      current_name = name;
      current_type = type;
      grouped = d.grouped_state(name);
    },
    [&](std::string&& k, std::string&& v) {
      if (grouped)
        k = group_prefix(d.opts.group_of(
              key_of_entry(current_name, current_type, k)))
            + k;
      batch.Put(current, k, v);
      if (batch.GetDataSize() > (4u << 20))
        flush();
    });
  flush();
}

pending_snapshot rocksdb_backend::snapshot(int64_t id, snapshot_kind kind) {
  auto d = impl_;
  d->ensure_open();
  if (kind == snapshot_kind::savepoint || d->opts.checkpoint_dir.empty()) {
    // Canonical: iterate a consistent view of the database off-thread.
    const rocksdb::Snapshot* snap = d->db->GetSnapshot();
    return {{}, [d, snap] {
              struct release {
                std::shared_ptr<impl> d;
                const rocksdb::Snapshot* s;
                ~release() { d->db->ReleaseSnapshot(s); }
              } guard{d, snap};
              return d->canonical(snap);
            }};
  }
  // Native: RocksDB's checkpoint flushes the memtables and hard-links the
  // files into `local`; they never change, so copying them can wait.
  auto local = fmt::format("{}/chk-{}", d->opts.local_dir, id);
  std::error_code ec;
  fs::remove_all(local, ec);
  rocksdb::Checkpoint* raw = nullptr;
  auto s = rocksdb::Checkpoint::Create(d->db, &raw);
  if (!s.ok())
    fail("cannot create a checkpoint", s);
  std::unique_ptr<rocksdb::Checkpoint> cp{raw};
  s = cp->CreateCheckpoint(local, 0);
  if (!s.ok())
    fail("cannot create a checkpoint", s);
  bool reuse = d->opts.incremental && kind == snapshot_kind::checkpoint;
  return {{}, [d, local, id, reuse] { return d->upload(local, id, reuse); }};
}

std::vector<std::string> rocksdb_backend::unclaimed() const {
  std::vector<std::string> names;
  for (auto& n : impl_->restored)
    names.push_back(n.substr(n.find('/') + 1));
  return names;
}

std::string native_range_to_canonical(const std::string& bytes,
                                      key_group_range range,
                                      int32_t max_parallelism) {
  rocksdb_backend_options opts;
  opts.local_dir = (fs::temp_directory_path()
                    / fmt::format("weir-convert-{}", random_tag()))
                     .string();
  rocksdb_backend b{opts};
  b.restore(bytes);
  auto& d = *b.impl_;
  if (!d.grouped || d.groups != max_parallelism || max_parallelism <= 0)
    return d.canonical(nullptr);
  return d.canonical(nullptr, range);
}

std::string native_to_canonical(const std::string& bytes) {
  return native_range_to_canonical(bytes, {}, 0);
}

} // namespace weir::state
