#include "fakes.hpp"

#include "messages/errors.hpp"

namespace weir::test {

job_master_actor::behavior_type
fake_job_master(job_master_actor::stateful_pointer<fake_job_master_state> self) {
  return {
    [=](offer_atom, const resource_id& from, std::vector<slot_offer>& offers) {
      std::vector<allocation_id> accepted;
      for (auto& o : offers) {
        self->state.offers.push_back(o);
        self->state.offered_by.push_back(from);
        accepted.push_back(o.alloc);
      }
      return accepted;
    },
    [=](update_atom, execution_attempt_id, execution_state, const io_metrics&,
        const std::string&) {},
    [=](crashed_atom, execution_attempt_id, const std::string&) {
      return true;
    },
    [=](exit_status_atom, execution_attempt_id, int32_t) {},
    [=](metrics_atom, execution_attempt_id, const io_metrics&) {},
    [=](collect_atom, execution_attempt_id, const collected_table&) {},
    [=](collect_atom, int64_t) { return std::vector<collected_table>{}; },
    [=](status_atom, bool) { return job_status{}; },
    [=](cancel_atom) {
      return cancel_outcome{job_state::running, job_state::cancelling};
    },
    [=](free_atom, const std::vector<allocation_id>& allocs) {
      auto& lost = self->state.lost;
      lost.insert(lost.end(), allocs.begin(), allocs.end());
    },
    [=](unmet_atom, std::string& why) { self->state.unmet = std::move(why); },
    [=](heartbeat_atom) { return job_id{}; },
    [=](checkpoint_atom, execution_attempt_id, int64_t, int64_t,
        operator_states&) {},
    [=](take_checkpoint_atom, bool) { return int64_t{0}; },
    [=](savepoint_atom, const std::string&, savepoint_mode) {
      return std::string{};
    },
    [=](rescale_atom, int32_t n) { return n; },
    [=](blob_atom, const std::string&) { return std::string{}; },
  };
}

job_store_actor::behavior_type
fake_job_store(job_store_actor::stateful_pointer<fake_job_store_state> self,
               recovered_jobs stored) {
  self->state.stored = std::move(stored);
  return {
    [=](load_atom) { return self->state.stored; },
    [=](put_atom, const job_graph& g) {
      self->state.puts.push_back(g);
      return true;
    },
    [=](finish_atom, const job_result& r) -> caf::result<bool> {
      self->state.dones.push_back(r);
      if (!self->state.hold_results)
        return true;
      auto rp = self->make_response_promise<bool>();
      self->state.held.push_back(rp);
      return rp;
    },
    [=](put_atom, const job_result& r) {
      self->state.dones.push_back(r);
      return true;
    },
    [=](checkpoint_atom, const job_id&, const checkpoint_snapshot&, int32_t) {
      return std::string{};
    },
    [=](load_atom, const job_id&) { return loaded_checkpoint{}; },
    [=](savepoint_atom, const std::string& path, const savepoint_data&) {
      return path;
    },
    [=](savepoint_atom, const std::string&) { return savepoint_data{}; },
    [=](blob_atom, put_atom, const std::string& hash, const std::string&) {
      self->state.blob_puts.push_back(hash);
      return true;
    },
    [=](blob_atom, const std::string&) { return std::string{}; },
  };
}

task_executor_actor::behavior_type fake_task_executor(
  task_executor_actor::stateful_pointer<fake_task_executor_state> self,
  resource_manager_actor rm, fake_task_executor_options opts) {
  slot_report report;
  report.slots.resize(1);
  self->request(rm, caf::infinite, register_atom_v, opts.id,
                task_executor_actor{self}, report)
    .then([](const resource_manager_id&) {});
  return {
    [=](request_atom, resource_manager_id, job_id, job_master_id,
        job_master_actor, std::vector<slot_grant>&) -> caf::result<int32_t> {
      if (opts.refuse_grants)
        return make_error(errc::slot_unavailable, "refused");
      return int32_t{0};
    },
    [](submit_atom, job_master_id, job_master_actor,
       std::vector<task_deployment>&) { return std::vector<subtask_actor>{}; },
    [](free_atom, job_id) {},
    [](reconcile_atom, job_id) { return std::vector<running_attempt>{}; },
    [](adopt_atom, job_id, job_master_id, job_master_actor) {
      return int32_t{0};
    },
    [=](heartbeat_atom) -> caf::result<resource_id> {
      if (opts.answer_heartbeats)
        return opts.id;
      auto rp = self->make_response_promise<resource_id>();
      self->state.unanswered.push_back(rp);
      return rp;
    },
    [](log_atom) { return std::vector<log_file>{}; },
    [](log_atom, const std::string&, int64_t) { return std::string{}; },
  };
}

job_graph numbers_graph(int64_t n) {
  job_graph g;
  g.id = job_id::random();
  g.name = "numbers";
  g.vertices = {
    {"numbers", "sequence", {{"from", "1"}, {"to", std::to_string(n)}}, 2},
    {"result", "collect", {}, 1}};
  g.edges = {{"numbers", "result", partitioning::rebalance}};
  return g;
}

} // namespace weir::test
