#include "actors/dispatcher/dispatcher.hpp"

#include <chrono>
#include <optional>
#include <stdexcept>

#include <caf/actor_system.hpp>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>
#include <caf/typed_response_promise.hpp>

#include <fmt/format.h>

#include "actors/common/crash.hpp"
#include "actors/common/event_log.hpp"
#include "actors/dispatcher/applications.hpp"
#include "actors/dispatcher/dispatcher_state.hpp"
#include "config/keys.hpp"
#include "messages/errors.hpp"
#include "messages/file_names.hpp"
#include "plan/schemas.hpp"
#include "plan/validation.hpp"
#include "storage/job_graph_store.hpp"

namespace weir {

namespace {

using namespace std::chrono_literals;
using namespace dispatcher_detail;

caf::error unknown_job(job_id id) {
  return make_error(errc::unknown_job, fmt::format("no job {}", id.to_string()));
}

caf::error not_running(job_id id) {
  return make_error(errc::not_running,
                    fmt::format("job {} is not running", id.to_string()));
}

/// The job is stored: it runs now, unless it was cancelled meanwhile.
void on_stored(self_ptr self, job_id id) {
  auto& entry = *self->state.jobs.find(id);
  log_eventf("job {} ({}) submitted", id.to_string(), entry.graph.name);
  self->state.apps.submitted(id, entry.graph.priority, entry.graph.application);
  if (entry.cancel_requested)
    complete(self, job_table::canceled_before_start(id, entry.graph.name,
                                                    now_ms()));
  else
    start_job_master(self, entry);
}

caf::result<job_id> submit(self_ptr self, job_graph& g) {
  auto& st = self->state;
  if (!g.id.valid())
    g.id = job_id::random();
  // Whoever sent it: names from the graph build paths on every node. A
  // client derived its schemas; one from before rows sent none.
  auto err = validate_job_graph(g, dispatcher_validation());
  if (!err)
    err = derive_missing_schemas(g);
  if (err) {
    log_eventf("job {} refused: {}", g.id.to_string(), describe(err));
    return err;
  }
  if (!st.apps.accepts(g.application))
    return make_error(errc::not_running,
                      fmt::format("application {} is being cancelled: it "
                                  "takes no more jobs",
                                  g.application.to_string()));
  if (auto same = st.jobs.same_as_known(g)) {
    // Idempotent submission: the same job again answers with its id.
    if (*same)
      return g.id;
    return make_error(errc::duplicate_job,
                      fmt::format("job {} already exists with a different "
                                  "graph",
                                  g.id.to_string()));
  }
  auto id = g.id;
  st.jobs.add(g, now_ms());
  auto rp = self->make_response_promise<job_id>();
  self->request(st.store, store_timeout, put_atom_v, std::move(g))
    .then(
      [=](bool) mutable {
        ++self->state.submissions;
        rp.deliver(id);
        on_stored(self, id);
      },
      [=](caf::error& err) mutable {
        self->state.jobs.erase(id);
        rp.deliver(make_error(errc::storage_failure,
                              "could not store the job: " + describe(err)));
      });
  return rp;
}

/// Rescales a running job in place through its JobMaster; once every
/// subtask runs at `n`, the JobGraph at `n` is stored, so a JobMaster that
/// takes over later runs the job at `n` too (until then one runs it at the
/// old parallelism, from the same checkpoints: docs/state.md § Rescaling a
/// running job).
caf::result<int32_t> rescale(self_ptr self, job_id id, job_master_actor jm,
                             int32_t n) {
  auto rp = self->make_response_promise<int32_t>();
  self->request(jm, caf::infinite, rescale_atom_v, n)
    .then(
      [=](int32_t done) mutable {
        auto* entry = self->state.jobs.find(id);
        if (entry == nullptr || entry->ended_with() != nullptr) {
          rp.deliver(done);
          return;
        }
        for (auto& v : entry->graph.vertices)
          v.parallelism = done;
        self->request(self->state.store, store_timeout, put_atom_v, entry->graph)
          .then([=](bool) mutable { rp.deliver(done); },
                [=](caf::error& err) mutable {
                  rp.deliver(make_error(
                    errc::storage_failure,
                    fmt::format("job {} runs at parallelism {}, but its "
                                "JobGraph could not be stored ({}): after a "
                                "jobmanager failover it runs at the old one",
                                id.to_string(), done, describe(err))));
                });
      },
      [=](caf::error& err) mutable { rp.deliver(std::move(err)); });
  return rp;
}

/// A running job's status: the counters and subtasks from its JobMaster,
/// the state and slot wait from the job table, as `list` shows them (the
/// JobMaster reports every change before it answers, so the table is never
/// older than the answer).
/// An ended job's status: its result's, with what its JobMaster's final
/// report held that the result does not.
job_status ended_status(self_ptr self, job_id id, const job_result& r,
                        bool detailed) {
  auto s = job_table::status_of(r);
  if (auto* e = self->state.jobs.find(id); e != nullptr) {
    s.exceptions = e->exceptions; // every view, as a running job's
    if (detailed)
      s.checkpoints = e->checkpoints;
  }
  return s;
}

caf::result<job_status> live_status(self_ptr self, job_id id,
                                    job_master_actor& jm, bool detailed) {
  auto rp = self->make_response_promise<job_status>();
  self->request(jm, job_master_timeout, status_atom_v, detailed)
    .then(
      [=](job_status& s) mutable {
        if (auto* e = self->state.jobs.find(id); e != nullptr && e->live) {
          s.state = e->live->state;
          s.error = e->live->error;
          s.slots_needed = e->live->slots_needed;
          s.slots_missing = e->live->slots_missing;
          s.waiting_since_ms = e->live->waiting_since_ms;
        }
        rp.deliver(std::move(s));
      },
      [=](caf::error& err) mutable {
        // The JobMaster ended while asked (its end may still be on its way
        // here): answer from what the Dispatcher knows, not with an error.
        auto* e = self->state.jobs.find(id);
        if (e == nullptr || err != caf::sec::request_receiver_down) {
          rp.deliver(std::move(err));
          return;
        }
        if (auto* r = e->ended_with())
          rp.deliver(ended_status(self, id, *r, detailed));
        else
          rp.deliver(job_table::status_of(id, *e));
      });
  return rp;
}

/// Answers from the job's JobMaster while it runs (`running`), from `ended`
/// with its result once it ended (while the result is being stored too:
/// the JobMaster is gone by then), `waiting` before its JobMaster started.
template <class T, class Running, class Ended, class Waiting>
caf::result<T> by_job(self_ptr self, job_id id, Running running, Ended ended,
                      Waiting waiting) {
  auto* entry = self->state.jobs.find(id);
  if (entry == nullptr)
    return unknown_job(id);
  if (auto* r = entry->ended_with())
    return ended(*r);
  if (!entry->jm)
    return waiting(*entry);
  return running(entry->jm);
}

dispatcher_private_actor::behavior_type
dispatcher_impl(self_ptr self, job_store_actor store, resource_manager_actor rm,
                job_master_options jm_opts, supervision_options supervision,
                bool application_mode, job_master_factory factory) {
  report_crashes(self);
  auto& st = self->state;
  st.make_job_master = factory ? std::move(factory)
                               : job_master_factory{spawn_job_master};
  st.application_mode = application_mode;
  st.jobs = job_table{supervision};
  st.store = std::move(store);
  st.rm = std::move(rm);
  st.jm_opts = jm_opts;
  self->set_down_handler(
    [=](caf::down_msg& dm) { on_job_master_down(self, dm); });
  // Going down takes the JobMasters along.
  self->set_exit_handler([=](caf::exit_msg& msg) {
    stop_job_masters(self, msg.reason);
    self->quit(msg.reason);
  });
  // Recovery comes first: nothing else is served until it is done.
  self->request(st.store, store_timeout, load_atom_v)
    .await([=](recovered_jobs& rec) { recover(self, rec); },
           [=](caf::error& err) {
             // Damaged stored data ends the jobmanager with one line of
             // its own (the supervisor does not restart the Dispatcher:
             // every start would fail the same way).
             if (err != make_error(errc::storage_corrupt))
               log_problemf("weir: recovery failed: {}", describe(err));
             self->quit(err);
           });
  auto refuse = [=](job_id id) {
    return [=](auto&&...) -> caf::error { return not_running(id); };
  };
  return {
    [=](submit_atom, job_graph& g) { return submit(self, g); },
    [=](blob_atom a, put_atom p, std::string& hash,
        std::string& bytes) -> caf::result<bool> {
      if (auto err = check_content_hash("blob hash", hash)) {
        log_eventf("blob refused: {}", describe(err));
        return err;
      }
      return self->delegate(self->state.store, a, p, std::move(hash),
                            std::move(bytes));
    },
    [=](list_atom) { return self->state.jobs.list(); },
    [=](metrics_atom) { return self->state.submissions; },
    [=](status_atom, job_id id, bool detailed) {
      return by_job<job_status>(
        self, id,
        [=](job_master_actor& jm) { return live_status(self, id, jm, detailed); },
        [=](const job_result& r) {
          return ended_status(self, id, r, detailed);
        },
        [=](const job_entry& e) { return job_table::status_of(id, e); });
    },
    [=](cancel_atom, job_id id) {
      // A driver blocked waiting for its jobs ends once they do.
      cancel_jobs(self, self->state.apps.cancelled(id),
                  "its application's driver is cancelled");
      return by_job<cancel_outcome>(
        self, id,
        [=](job_master_actor& jm) { return self->delegate(jm, cancel_atom_v); },
        [](const job_result& r) { return cancel_outcome{r.state, r.state}; },
        [](job_entry& e) {
          auto before = e.cancel_requested ? job_state::cancelling
                                           : job_state::created;
          e.cancel_requested = true;
          return cancel_outcome{before, job_state::cancelling};
        });
    },
    [=](collect_atom a, job_id id, int64_t offset) {
      return by_job<std::vector<collected_table>>(
        self, id,
        [=](job_master_actor& jm) { return self->delegate(jm, a, offset); },
        [=](const job_result& r) {
          return job_table::collected_from(
            r, offset, self->state.jm_opts.collect_batch_bytes);
        },
        [](const job_entry&) { return std::vector<collected_table>{}; });
    },
    [=](take_checkpoint_atom, job_id id, bool full) {
      return by_job<int64_t>(
        self, id,
        [=](job_master_actor& jm) {
          return self->delegate(jm, take_checkpoint_atom_v, full);
        },
        refuse(id), refuse(id));
    },
    [=](savepoint_atom, job_id id, std::string& dir, savepoint_mode mode) {
      return by_job<std::string>(
        self, id,
        [=](job_master_actor& jm) {
          return self->delegate(jm, savepoint_atom_v, dir, mode);
        },
        refuse(id), refuse(id));
    },
    [=](rescale_atom, job_id id, int32_t n) {
      return by_job<int32_t>(
        self, id,
        [=](job_master_actor& jm) { return rescale(self, id, jm, n); },
        refuse(id), refuse(id));
    },
    [=](graph_atom, job_id id) -> caf::result<job_graph> {
      auto* entry = self->state.jobs.find(id);
      if (entry == nullptr)
        return unknown_job(id);
      return entry->graph;
    },
    [=](result_atom, job_id id) -> caf::result<job_result> {
      auto* entry = self->state.jobs.find(id);
      if (entry == nullptr)
        return unknown_job(id);
      if (entry->result) {
        // The attached client of an ended application has its result: the
        // cluster may end now.
        if (self->state.ending && id == self->state.ending_app)
          self->send(self, end_atom_v);
        return *entry->result;
      }
      auto client = caf::actor_cast<caf::actor_addr>(self->current_sender());
      auto rp = self->make_response_promise<job_result>();
      entry->waiting.insert_or_assign(client, rp);
      return rp;
    },
    [=](update_atom, job_status& s) {
      self->state.jobs.reported(
        caf::actor_cast<caf::actor_addr>(self->current_sender()), std::move(s));
    },
    [=](done_atom, job_result& r) { complete(self, std::move(r)); },
    [=](rm_changed_atom, resource_manager_actor& rm) {
      auto& st = self->state;
      st.rm = std::move(rm);
      // JobMasters end with their ResourceManager (leader_lost); those
      // that already did start again now.
      for (auto& id : st.jobs.awaiting_resource_manager())
        start_job_master(self, *st.jobs.find(id));
    },
    [=](restart_atom, job_id id, int32_t incarnation) {
      restart_job_master(self, id, incarnation);
    },
    [=](end_atom) {
      if (self->state.ending)
        self->quit(*self->state.ending);
    },
  };
}

} // namespace

dispatcher_actor spawn_dispatcher(caf::actor_system& sys, job_store_actor store,
                                  resource_manager_actor rm,
                                  job_master_options jm_opts,
                                  supervision_options supervision,
                                  bool application_mode,
                                  job_master_factory start_job_master) {
  return caf::actor_cast<dispatcher_actor>(
    sys.spawn(dispatcher_impl, std::move(store), std::move(rm), jm_opts,
              supervision, application_mode, std::move(start_job_master)));
}

} // namespace weir
