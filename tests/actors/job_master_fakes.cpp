#include "job_master_fakes.hpp"

namespace weir::test {

resource_manager_actor::behavior_type
fake_resource_manager(resource_manager_actor::stateful_pointer<fake_rm_state> self) {
  return {
    [=](register_atom, const resource_id&, const task_executor_actor&,
        const slot_report&) { return resource_manager_id{}; },
    [=](request_atom, job_master_id, job_id, const job_master_actor&,
        const std::vector<slot_request>& reqs) {
      self->state.requests.push_back(reqs);
      return int32_t{0};
    },
    [=](free_atom, const resource_id&, const std::vector<allocation_id>&) {},
    [=](disconnect_atom, job_id, job_master_id) { ++self->state.disconnects; },
    [=](overview_atom) { return cluster_overview{}; },
    [=](overview_atom, job_id, const std::vector<resource_id>&) {
      return int32_t{0};
    },
    [=](reconcile_atom, job_id) { return std::vector<job_slot_holder>{}; },
    [=](list_atom) { return std::vector<task_manager_info>{}; },
    [=](log_atom, const resource_id&) { return std::vector<log_file>{}; },
    [=](log_atom, const resource_id&, const std::string&, int64_t) {
      return std::string{};
    },
    [=](start_atom, const std::string&) {},
    [=](exited_atom, const resource_id&, const std::string&) {},
  };
}

subtask_actor::behavior_type
fake_subtask(subtask_actor::stateful_pointer<fake_subtask_state> self,
             execution_attempt_id attempt, job_master_actor jm) {
  self->state.attempt = attempt;
  self->state.jm = jm;
  return {
    [=](start_atom, const subtask_wiring&) { self->state.started = true; },
    [=](data_atom, int32_t, int32_t, int64_t, const row_batch&) {},
    [=](end_atom, int32_t, int64_t) {},
    [=](backlog_atom, int32_t, int32_t, int32_t) {},
    [=](frame_atom, const resource_id&, const frame_header&,
        const std::vector<char>&) {},
    [=](lost_atom, const std::string&) {},
    [=](credit_atom, int32_t, int32_t, int32_t) {},
    [=](barrier_atom, int32_t, int32_t, int64_t, const checkpoint_barrier&) {},
    [=](watermark_atom, int32_t, int32_t, int64_t, int64_t, bool) {},
    [=](trigger_atom, const checkpoint_barrier& b) {
      self->state.triggers.push_back(b);
    },
    [=](stop_atom, const checkpoint_barrier& b) {
      self->state.triggers.push_back(b);
      self->state.halted = true;
    },
    [=](finish_atom) {
      self->state.halted = false;
      self->state.finish_requested = true;
    },
    [=](resume_atom) { self->state.halted = false; },
    [=](commit_atom, int64_t id) { self->state.commits.push_back(id); },
    [=](cancel_atom) {
      self->state.canceled = true;
      self->send(self->state.jm, update_atom_v, self->state.attempt,
                 execution_state::canceled, io_metrics{}, std::string{});
    },
    [=](adopt_atom, job_master_actor& jm) {
      self->state.jm = std::move(jm);
      return int64_t{0};
    },
  };
}

task_executor_actor::behavior_type
fake_task_executor(task_executor_actor::stateful_pointer<fake_te_state> self,
                   resource_id name) {
  self->state.id = std::move(name);
  return {
    [=](request_atom, resource_manager_id, job_id, job_master_id,
        job_master_actor jm, const std::vector<slot_grant>& grants) {
      std::vector<slot_offer> offers;
      for (auto& g : grants)
        offers.push_back(slot_offer{g.alloc, g.slot_index, {}});
      self->request(jm, caf::infinite, offer_atom_v, self->state.id, offers)
        .then([](const std::vector<allocation_id>&) {});
      return static_cast<int32_t>(grants.size());
    },
    [=](submit_atom, job_master_id, job_master_actor jm,
        const std::vector<task_deployment>& ds) {
      std::vector<subtask_actor> spawned;
      for (auto& d : ds) {
        self->state.deployments.push_back(d);
        spawned.push_back(self->spawn(fake_subtask, d.attempt, jm));
      }
      auto& all = self->state.subtasks;
      all.insert(all.end(), spawned.begin(), spawned.end());
      return spawned;
    },
    [=](free_atom, job_id job) { self->state.freed.push_back(job); },
    [](reconcile_atom, job_id) { return std::vector<running_attempt>{}; },
    [](adopt_atom, job_id, job_master_id, job_master_actor) {
      return int32_t{0};
    },
    [=](heartbeat_atom) { return self->state.id; },
    [](log_atom) { return std::vector<log_file>{}; },
    [](log_atom, const std::string&, int64_t) { return std::string{}; },
  };
}

dispatcher_actor::behavior_type
fake_dispatcher(dispatcher_actor::stateful_pointer<fake_dispatcher_state> self) {
  return {
    [=](submit_atom, const job_graph& g) { return g.id; },
    [=](blob_atom, put_atom, const std::string&, const std::string&) {
      return true;
    },
    [=](list_atom) { return std::vector<job_status>{}; },
    [=](metrics_atom) { return int64_t{0}; },
    [=](status_atom, job_id, bool) { return job_status{}; },
    [=](cancel_atom, job_id) {
      return cancel_outcome{job_state::running, job_state::canceled};
    },
    [=](take_checkpoint_atom, job_id, bool) { return int64_t{0}; },
    [=](savepoint_atom, job_id, const std::string&, savepoint_mode) {
      return std::string{};
    },
    [=](rescale_atom, job_id, int32_t n) { return n; },
    [=](collect_atom, job_id, int64_t) {
      return std::vector<collected_table>{};
    },
    [=](graph_atom, job_id) { return job_graph{}; },
    [=](result_atom, job_id) { return job_result{}; },
    [=](update_atom, const job_status&) {},
    [=](done_atom, const job_result& r) { self->state.results.push_back(r); },
    [=](rm_changed_atom, const resource_manager_actor&) {},
  };
}

} // namespace weir::test
