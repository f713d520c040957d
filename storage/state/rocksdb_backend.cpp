#include "storage/state/rocksdb_backend.hpp"

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

class rocksdb_column : public kv_column {
public:
  rocksdb_column(rocksdb::DB* db, rocksdb::ColumnFamilyHandle* cf)
    : db_(db), cf_(cf) {
    write_.disableWAL = true;
  }

  bool get(std::string_view key, std::string& value) override {
    auto s = db_->Get(read_, cf_, rocksdb::Slice{key.data(), key.size()},
                      &value);
    if (s.IsNotFound())
      return false;
    if (!s.ok())
      fail("get", s);
    return true;
  }
  void put(std::string_view key, std::string_view value) override {
    auto s = db_->Put(write_, cf_, rocksdb::Slice{key.data(), key.size()},
                      rocksdb::Slice{value.data(), value.size()});
    if (!s.ok())
      fail("put", s);
  }
  void remove(std::string_view key) override {
    auto s = db_->Delete(write_, cf_, rocksdb::Slice{key.data(), key.size()});
    if (!s.ok())
      fail("delete", s);
  }
  void scan(std::string_view prefix,
            const std::function<void(std::string_view, std::string_view)>& f)
    override {
    std::unique_ptr<rocksdb::Iterator> it{db_->NewIterator(read_, cf_)};
    rocksdb::Slice p{prefix.data(), prefix.size()};
    for (it->Seek(p); it->Valid() && it->key().starts_with(p); it->Next())
      f(std::string_view{it->key().data(), it->key().size()},
        std::string_view{it->value().data(), it->value().size()});
    if (!it->status().ok())
      fail("scan", it->status());
  }
  void scan_from(std::string_view from,
                 const std::function<bool(std::string_view, std::string_view)>&
                   f) override {
    std::unique_ptr<rocksdb::Iterator> it{db_->NewIterator(read_, cf_)};
    for (it->Seek(rocksdb::Slice{from.data(), from.size()}); it->Valid();
         it->Next())
      if (!f(std::string_view{it->key().data(), it->key().size()},
             std::string_view{it->value().data(), it->value().size()}))
        return;
    if (!it->status().ok())
      fail("scan", it->status());
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
  rocksdb::DB* db_;
  rocksdb::ColumnFamilyHandle* cf_;
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
    }
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

  /// The canonical bytes of the database as of `snap`.
  std::string canonical(const rocksdb::Snapshot* snap) {
    rocksdb::ReadOptions ro;
    ro.snapshot = snap;
    int64_t states = 0;
    for (auto& [name, h] : families)
      states += name != rocksdb::kDefaultColumnFamilyName;
    canonical_writer w{states};
    for (auto& [name, h] : families) {
      if (name == rocksdb::kDefaultColumnFamilyName)
        continue;
      auto type = name.rfind("map/", 0) == 0 ? state_type::map : state_type::value;
      auto plain = name.substr(name.find('/') + 1);
      std::unique_ptr<rocksdb::Iterator> it{db->NewIterator(ro, h)};
      int64_t n = 0;
      for (it->SeekToFirst(); it->Valid(); it->Next())
        ++n;
      w.begin_state(plain, type, n);
      for (it->SeekToFirst(); it->Valid(); it->Next())
        w.entry(std::string_view{it->key().data(), it->key().size()},
                std::string_view{it->value().data(), it->value().size()});
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
    slot = std::make_unique<rocksdb_column>(impl_->db, family);
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
    for (auto& n : names)
      if (n != rocksdb::kDefaultColumnFamilyName)
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
  read_canonical(
    bytes,
    [&](const std::string& name, state_type type, int64_t) {
      auto full = cf_name(name, type);
      current = d.family(full);
      d.restored.insert(full);
    },
    [&](std::string&& k, std::string&& v) {
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

std::string native_to_canonical(const std::string& bytes) {
  rocksdb_backend_options opts;
  opts.local_dir = (fs::temp_directory_path()
                    / fmt::format("weir-convert-{}", random_tag()))
                     .string();
  rocksdb_backend b{opts};
  b.restore(bytes);
  return b.snapshot(0, snapshot_kind::savepoint).finish();
}

} // namespace weir::state
