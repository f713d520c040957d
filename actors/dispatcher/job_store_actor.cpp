#include "actors/dispatcher/job_store_actor.hpp"

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <fmt/format.h>

#include "actors/common/event_log.hpp"
#include "messages/errors.hpp"
#include "storage/blob_store.hpp"
#include "storage/checkpoint_store.hpp"
#include "storage/files.hpp"
#include "storage/finish_job.hpp"
#include "storage/job_graph_store.hpp"
#include "storage/job_result_store.hpp"
#include "storage/kv_store.hpp"
#include "storage/temporary_files.hpp"

namespace weir {

namespace {

struct store_state {
  std::shared_ptr<storage::kv_store> kv;
  std::unique_ptr<storage::checkpoint_store> checkpoints;
  static inline const char* name = "job_store";
};

using self_ptr = job_store_actor::stateful_pointer<store_state>;

caf::result<recovered_jobs> load(storage::kv_store& kv) {
  recovered_jobs out;
  auto graphs = storage::job_graph_store{kv}.load_all();
  if (!graphs)
    return graphs.error();
  auto results = storage::job_result_store{kv}.load_all();
  if (!results)
    return results.error();
  out.graphs = std::move(graphs->graphs);
  out.problems = std::move(graphs->problems);
  out.unreadable = std::move(graphs->unreadable);
  for (auto& p : results->problems)
    out.problems.push_back(std::move(p));
  for (auto& e : results->entries) {
    // A dirty result means the job ended but its cleanup did not: finish it.
    if (e.dirty)
      if (auto err = storage::finish_job(kv, e.result))
        out.problems.push_back("cleanup of job " + e.result.id.to_string()
                               + " failed: " + caf::to_string(err));
    out.results.push_back(std::move(e.result));
  }
  return out;
}

job_store_actor::behavior_type job_store_impl(self_ptr self,
                                              std::shared_ptr<storage::kv_store> kv,
                                              std::string checkpoint_dir) {
  self->state.kv = std::move(kv);
  // A process killed while writing a savepoint or checkpoint left its
  // temporary file.
  storage::temporary_files tmp{*self->state.kv};
  auto stale = tmp.remove_stale();
  if (!checkpoint_dir.empty())
    for (auto& path : tmp.remove_stale_checkpoints(checkpoint_dir))
      stale.push_back(std::move(path));
  for (auto& path : stale)
    log_eventf("removed the temporary file {} of a write that did not "
               "complete",
               path);
  if (!checkpoint_dir.empty())
    self->state.checkpoints = std::make_unique<storage::checkpoint_store>(
      *self->state.kv, checkpoint_dir);
  return {
    [=](load_atom) { return load(*self->state.kv); },
    [=](put_atom, const job_graph& g) -> caf::result<bool> {
      if (auto err = storage::job_graph_store{*self->state.kv}.put(g))
        return err;
      return true;
    },
    [=](put_atom, const job_result& r) -> caf::result<bool> {
      if (auto err = storage::job_result_store{*self->state.kv}.put_clean(r))
        return err;
      return true;
    },
    [=](finish_atom, const job_result& r) -> caf::result<bool> {
      auto& kv = *self->state.kv;
      // The job's blobs go with it unless another stored job uses them.
      std::vector<std::string> blobs;
      if (auto g = storage::job_graph_store{kv}.get(r.id); g && *g) {
        for (auto& b : (*g)->code.libraries)
          blobs.push_back(b.hash);
        for (auto& b : (*g)->code.files)
          blobs.push_back(b.hash);
      }
      if (auto err = storage::finish_job(kv, r))
        return err;
      if (auto err = storage::blob_store{kv}.remove_unreferenced(blobs))
        return err;
      // The result is stored (synced): answer, then put it into a table
      // file as well, so that a finished or canceled job never runs again
      // even if the live write-ahead log is lost.
      auto rp = self->make_response_promise<bool>();
      rp.deliver(true);
      if (auto err = kv.persist())
        log_problemf("weir: cannot flush the stored results: {}",
                     describe(err));
      return rp;
    },
    [=](blob_atom, put_atom, const std::string& hash,
        const std::string& bytes) -> caf::result<bool> {
      if (auto err = storage::blob_store{*self->state.kv}.put(hash, bytes))
        return err;
      return true;
    },
    [=](blob_atom, const std::string& hash) -> caf::result<std::string> {
      auto blob = storage::blob_store{*self->state.kv}.get(hash);
      if (!blob)
        return blob.error();
      if (!*blob)
        return make_error(errc::blob_not_found,
                          fmt::format("the cluster has no blob {} (a user "
                                      "library or file of the job)",
                                      hash));
      return std::move(**blob);
    },
    [=](checkpoint_atom, const job_id& job, const checkpoint_snapshot& cp,
        int32_t retained) -> caf::result<std::string> {
      auto& store = self->state.checkpoints;
      if (!store)
        return std::string{};
      auto path = store->put(job, cp, retained);
      if (!path)
        return path.error();
      return *path;
    },
    [=](savepoint_atom, const std::string& path,
        const savepoint_data& sp) -> caf::result<std::string> {
      // write_savepoint writes a temporary file, syncs and renames it.
      storage::temporary_files tmp{*self->state.kv};
      auto tmp_path = storage::temporary_name(path);
      if (auto err = tmp.begin(tmp_path))
        return err;
      auto err = storage::write_savepoint(path, sp);
      tmp.end(tmp_path);
      if (err)
        return err;
      return path;
    },
    [=](savepoint_atom, const std::string& path) -> caf::result<savepoint_data> {
      auto sp = storage::read_savepoint(path);
      if (!sp)
        return sp.error();
      return std::move(*sp);
    },
    [=](load_atom, const job_id& job) -> caf::result<loaded_checkpoint> {
      loaded_checkpoint result;
      auto& store = self->state.checkpoints;
      if (!store)
        return result;
      auto cp = store->latest(job, result.problems);
      if (!cp)
        return cp.error();
      result.cp = std::move(*cp);
      return result;
    },
  };
}

} // namespace

job_store_actor spawn_job_store(caf::actor_system& sys,
                                std::shared_ptr<storage::kv_store> kv,
                                std::string checkpoint_dir,
                                bool own_thread) {
  if (!own_thread)
    return sys.spawn(job_store_impl, std::move(kv), std::move(checkpoint_dir));
  return sys.spawn<caf::detached>(job_store_impl, std::move(kv),
                                  std::move(checkpoint_dir));
}

} // namespace weir
