#include "actors/task_executor/code_resolver.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <fmt/format.h>

#include "actors/common/event_log.hpp"
#include "messages/errors.hpp"
#include "messages/file_names.hpp"
#include "storage/blob_store.hpp"

namespace weir {

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

/// How long a blob may take to arrive from the JobMaster.
constexpr auto fetch_timeout = 60s;

struct resolver_state {
  std::string cache_dir;
  std::string node;
  /// Content hashes of origin files, by path, valid while size and mtime
  /// stay the same: a node does not hash a big library on every deploy.
  struct stamp {
    uintmax_t size = 0;
    fs::file_time_type mtime;
    std::string hash;
  };
  std::map<std::string, stamp> origin_hashes;
  static inline const char* name = "code_resolver";
};

using self_ptr = code_resolver_actor::stateful_pointer<resolver_state>;

/// Whether `path` holds content `hash` (remembered by size and mtime).
bool holds(self_ptr self, const std::string& path, const std::string& hash) {
  std::error_code ec;
  auto size = fs::file_size(path, ec);
  if (ec)
    return false;
  auto mtime = fs::last_write_time(path, ec);
  if (ec)
    return false;
  auto& memo = self->state.origin_hashes[path];
  if (memo.hash.empty() || memo.size != size || memo.mtime != mtime) {
    auto h = storage::file_hash(path);
    if (!h)
      return false;
    memo = {size, mtime, *h};
  }
  return memo.hash == hash;
}

/// Where `b` is on this node without fetching it, or "". A library is
/// always used from the cache, named by its content hash, so that a
/// library rebuilt at the client's path is never mistaken for the one
/// loaded before (dlopen knows files by path); the optimized path copies
/// it there locally instead of fetching it.
std::string find_local(self_ptr self, const blob_ref& b, bool always_ship,
                       bool is_library) {
  auto dir = fmt::format("{}/{}", self->state.cache_dir, b.hash);
  auto cached = dir + "/" + b.name;
  std::error_code ec;
  if (fs::is_regular_file(cached, ec))
    return cached;
  if (always_ship || b.origin.empty() || !holds(self, b.origin, b.hash))
    return {};
  log_eventf("using {} where the client had it (same content, {})",
             b.origin, b.hash);
  if (!is_library)
    return b.origin;
  fs::create_directories(dir, ec);
  auto tmp = cached + ".tmp";
  fs::copy_file(b.origin, tmp, fs::copy_options::overwrite_existing, ec);
  if (!ec)
    fs::rename(tmp, cached, ec);
  return ec ? std::string{} : cached;
}

/// Writes a fetched blob into the cache (a temporary name, then renamed).
caf::expected<std::string> store(self_ptr self, const blob_ref& b,
                                 const std::string& bytes) {
  if (storage::content_hash(bytes) != b.hash)
    return make_error(errc::storage_failure,
                      fmt::format("'{}' arrived with another content hash",
                                  b.name));
  auto dir = fmt::format("{}/{}", self->state.cache_dir, b.hash);
  std::error_code ec;
  fs::create_directories(dir, ec);
  auto path = dir + "/" + b.name;
  auto tmp = path + ".tmp";
  {
    std::ofstream out{tmp, std::ios::binary | std::ios::trunc};
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!out)
      return make_error(errc::storage_failure,
                        fmt::format("cannot write '{}': {}", tmp,
                                    std::strerror(errno)));
  }
  fs::rename(tmp, path, ec);
  if (ec)
    return make_error(errc::storage_failure,
                      fmt::format("cannot rename '{}': {}", tmp, ec.message()));
  return path;
}

/// The libraries a classpath entry names on this node: a file, or every
/// `.so` file in a directory (sorted).
caf::expected<std::vector<std::string>> classpath_libraries(self_ptr self,
                                                            std::string entry) {
  if (entry.rfind("file://", 0) == 0)
    entry = entry.substr(7);
  std::error_code ec;
  if (fs::is_regular_file(entry, ec))
    return std::vector<std::string>{entry};
  if (!fs::is_directory(entry, ec))
    return make_error(errc::invalid_job,
                      fmt::format("-C/--classpath '{}' does not exist on "
                                  "TaskExecutor {}",
                                  entry, self->state.node));
  std::vector<std::string> libs;
  for (auto& f : fs::directory_iterator{entry, ec})
    if (f.path().extension() == ".so")
      libs.push_back(f.path().string());
  std::sort(libs.begin(), libs.end());
  return libs;
}

/// Refuses a job's user code for `problem`, once in the event log too.
caf::error refuse(self_ptr self, const std::string& problem) {
  auto what = fmt::format("TaskExecutor {} refuses the job's user code: {}",
                          self->state.node, problem);
  log_event(what);
  return make_error(errc::invalid_job, std::move(what));
}

/// What is still being fetched for one request.
struct pending_request {
  caf::typed_response_promise<local_code> rp;
  local_code result;
  std::vector<std::string> library_slots; // in order; filled as they come
  size_t outstanding = 0;
  bool failed = false;
};

code_resolver_actor::behavior_type resolver_impl(self_ptr self,
                                                 std::string cache_dir,
                                                 std::string node) {
  self->state.cache_dir = std::move(cache_dir);
  self->state.node = std::move(node);
  return {
    [=](blob_atom, const user_code& code,
        job_master_actor jm) -> caf::result<local_code> {
      // Names and hashes become paths in the cache: whoever sent them,
      // nothing is looked up or written for a job with one that is bad.
      if (auto err = check_user_code(code))
        return refuse(self, describe(err));
      auto req = std::make_shared<pending_request>();
      req->rp = self->make_response_promise<local_code>();
      for (auto& entry : code.classpath) {
        auto libs = classpath_libraries(self, entry);
        if (!libs) {
          req->rp.deliver(libs.error()); // the promise owns the response
          return req->rp;
        }
        req->library_slots.insert(req->library_slots.end(), libs->begin(),
                                  libs->end());
      }
      auto finish = [req] {
        if (req->failed || req->outstanding > 0)
          return;
        req->result.libraries = std::move(req->library_slots);
        req->rp.deliver(std::move(req->result));
      };
      // Libraries, then files; each either here already or fetched.
      std::vector<std::pair<blob_ref, bool>> wanted;
      for (auto& b : code.libraries)
        wanted.emplace_back(b, true);
      for (auto& b : code.files)
        wanted.emplace_back(b, false);
      for (auto& [b, is_library] : wanted) {
        size_t slot = req->library_slots.size();
        if (is_library)
          req->library_slots.emplace_back();
        auto place = [req, slot, is_library = is_library,
                      name = b.name](std::string path) {
          if (is_library)
            req->library_slots[slot] = std::move(path);
          else
            req->result.files[name] = std::move(path);
        };
        if (auto path = find_local(self, b, code.always_ship, is_library);
            !path.empty()) {
          place(std::move(path));
          continue;
        }
        ++req->outstanding;
        self->request(jm, fetch_timeout, blob_atom_v, b.hash)
          .then(
            [=, b = b](const std::string& bytes) {
              --req->outstanding;
              log_eventf("fetched {} ({}, {} bytes) from the JobMaster",
                         b.name, b.hash, bytes.size());
              auto path = store(self, b, bytes);
              if (!path) {
                if (!req->failed)
                  req->rp.deliver(path.error());
                req->failed = true;
                return;
              }
              place(std::move(*path));
              finish();
            },
            [=, b = b](caf::error& err) {
              --req->outstanding;
              if (!req->failed)
                req->rp.deliver(make_error(
                  errc::storage_failure,
                  fmt::format("TaskExecutor {} could not fetch '{}' ({}): {}",
                              self->state.node, b.name, b.hash,
                              describe(err))));
              req->failed = true;
            });
      }
      finish();
      return req->rp;
    },
  };
}

} // namespace

code_resolver_actor spawn_code_resolver(caf::actor_system& sys,
                                        std::string cache_dir,
                                        std::string node, bool own_thread) {
  if (own_thread)
    return sys.spawn<caf::detached>(resolver_impl, std::move(cache_dir),
                                    std::move(node));
  return sys.spawn(resolver_impl, std::move(cache_dir), std::move(node));
}

} // namespace weir
