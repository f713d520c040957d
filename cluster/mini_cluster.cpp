#include "cluster/mini_cluster.hpp"

#include <caf/actor_system.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/send.hpp>

#include "actors/supervisor/supervisor.hpp"
#include "actors/dispatcher/job_store_actor.hpp"
#include "actors/task_executor/task_executor.hpp"
#include "cluster/local_state.hpp"
#include "cluster/state_dir.hpp"
#include "config/keys.hpp"
#include "storage/memory_store.hpp"
#include "storage/rocksdb_store.hpp"

namespace weir {

caf::expected<std::unique_ptr<mini_cluster>>
mini_cluster::start(caf::actor_system& sys, const mini_cluster_options& opts) {
  std::shared_ptr<storage::kv_store> kv = opts.store;
  if (kv) {
    // opened by the caller
  } else if (opts.state_dir.empty()) {
    kv = std::make_shared<storage::memory_store>();
  } else {
    auto db = storage::open_rocksdb_store(opts.state_dir);
    if (!db)
      return db.error();
    kv = std::move(*db);
  }
  std::unique_ptr<mini_cluster> c{new mini_cluster};
  c->local_state_dir_ = claim_local_state_dir(opts.local_state_root);
  c->store_ = spawn_job_store(sys, std::move(kv), opts.checkpoint_dir);
  supervisor_options sup;
  sup.intensity = opts.supervision;
  sup.resource_manager = opts.resource_manager;
  sup.job_master = opts.job_master;
  sup.job_master.checkpoint_dir = opts.checkpoint_dir;
  sup.application_mode = opts.application_mode;
  c->supervisor_ = spawn_supervisor(sys, c->store_, sup);
  caf::scoped_actor self{sys};
  self->request(c->supervisor_, caf::infinite, lookup_atom_v)
    .receive(
      [&](dispatcher_actor& d, resource_manager_actor& rm) {
        c->dispatcher_ = std::move(d);
        c->rm_ = std::move(rm);
      },
      [&](caf::error&) {});
  for (int32_t i = 0; i < opts.task_executors; ++i) {
    task_executor_options te;
    te.id = resource_id{"taskexecutor-" + std::to_string(i)};
    te.slots = opts.slots_per_task_executor;
    te.exchange = opts.exchange;
    te.network = opts.network;
    te.keep_tasks = opts.keep_tasks;
    te.local_state_dir = c->local_state_dir_;
    te.dispatcher = c->dispatcher_;
    c->task_executors_.push_back(spawn_task_executor(sys, te, c->rm_));
  }
  return c;
}

mini_cluster::~mini_cluster() {
  stop();
  release_local_state_dir(local_state_dir_);
}

void mini_cluster::stop() {
  auto down = caf::exit_reason::user_shutdown;
  if (supervisor_)
    caf::anon_send_exit(supervisor_, down); // with Dispatcher and RM
  for (auto& te : task_executors_)
    caf::anon_send_exit(te, down);
  if (store_)
    caf::anon_send_exit(store_, down);
  supervisor_ = nullptr;
  dispatcher_ = nullptr;
  rm_ = nullptr;
  store_ = nullptr;
  task_executors_.clear();
}

caf::expected<std::unique_ptr<mini_cluster>>
start_local_cluster(caf::actor_system& sys, mini_cluster_options opts,
                    const std::string& cluster_id) {
  if (!opts.state_dir.empty() && !opts.store) {
    // Opened here (not by mini_cluster::start) to check whose it is first.
    auto kv = open_state_dir(opts.state_dir, cluster_id);
    if (!kv)
      return kv.error();
    opts.store = std::move(*kv);
  }
  return mini_cluster::start(sys, opts);
}

std::string checkpoint_dir_of(const configuration& cfg,
                              const std::string& state_dir) {
  if (auto dir = cfg.get_if_set(keys::checkpoint_dir))
    return *dir;
  return state_dir.empty() ? std::string{} : state_dir + "/checkpoints";
}

int32_t slots_for(int32_t parallelism, int32_t task_executors) {
  if (task_executors < 1)
    return parallelism;
  return (parallelism + task_executors - 1) / task_executors;
}

} // namespace weir
