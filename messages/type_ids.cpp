#include "messages/type_ids.hpp"

#include <caf/actor_system_config.hpp>
#include <caf/type_id.hpp>

#include "messages/cluster_gateway.hpp"
#include "messages/code_resolver.hpp"
#include "messages/data_service.hpp"
#include "messages/dispatcher.hpp"
#include "messages/errors.hpp"
#include "messages/job_store.hpp"
#include "messages/resource_manager.hpp"
#include "messages/row_receiver.hpp"
#include "messages/subtask.hpp"
#include "messages/task_executor.hpp"
#include "messages/worker_launcher.hpp"

// The one type-id block of the project, alphabetised.
CAF_BEGIN_TYPE_ID_BLOCK(weir, caf::first_custom_type_id)
  CAF_ADD_TYPE_ID(weir, (std::map<std::string, std::string>))
  CAF_ADD_TYPE_ID(weir, (std::vector<weir::allocation_id>))
  CAF_ADD_TYPE_ID(weir, (std::vector<weir::job_status>))
  CAF_ADD_TYPE_ID(weir, (std::vector<weir::job_slot_holder>))
  CAF_ADD_TYPE_ID(weir, (std::vector<weir::log_file>))
  CAF_ADD_TYPE_ID(weir, (std::vector<weir::collected_table>))
  CAF_ADD_TYPE_ID(weir, (std::vector<weir::data_endpoint>))
  CAF_ADD_TYPE_ID(weir, (std::vector<weir::running_attempt>))
  CAF_ADD_TYPE_ID(weir, (std::vector<weir::slot_grant>))
  CAF_ADD_TYPE_ID(weir, (std::vector<weir::slot_offer>))
  CAF_ADD_TYPE_ID(weir, (std::vector<weir::slot_request>))
  CAF_ADD_TYPE_ID(weir, (std::vector<weir::subtask_actor>))
  CAF_ADD_TYPE_ID(weir, (std::vector<weir::task_deployment>))
  CAF_ADD_TYPE_ID(weir, (std::vector<weir::task_manager_info>))
  CAF_ADD_TYPE_ID(weir, (weir::allocation_id))
  CAF_ADD_TYPE_ID(weir, (weir::cancel_outcome))
  CAF_ADD_TYPE_ID(weir, (weir::collected_table))
  CAF_ADD_TYPE_ID(weir, (weir::checkpoint_barrier))
  CAF_ADD_TYPE_ID(weir, (weir::checkpoint_kind))
  CAF_ADD_TYPE_ID(weir, (weir::savepoint_mode))
  CAF_ADD_TYPE_ID(weir, (weir::checkpoint_snapshot))
  CAF_ADD_TYPE_ID(weir, (weir::cluster_gateway_actor))
  CAF_ADD_TYPE_ID(weir, (weir::cluster_overview))
  CAF_ADD_TYPE_ID(weir, (weir::data_endpoint))
  CAF_ADD_TYPE_ID(weir, (weir::data_service_actor))
  CAF_ADD_TYPE_ID(weir, (weir::dispatcher_actor))
  CAF_ADD_TYPE_ID(weir, (weir::execution_attempt_id))
  CAF_ADD_TYPE_ID(weir, (weir::execution_state))
  CAF_ADD_TYPE_ID(weir, (weir::frame_header))
  CAF_ADD_TYPE_ID(weir, (weir::hardware_description))
  CAF_ADD_TYPE_ID(weir, (weir::io_metrics))
  CAF_ADD_TYPE_ID(weir, (weir::job_graph))
  CAF_ADD_TYPE_ID(weir, (weir::job_id))
  CAF_ADD_TYPE_ID(weir, (weir::job_master_actor))
  CAF_ADD_TYPE_ID(weir, (weir::job_master_id))
  CAF_ADD_TYPE_ID(weir, (weir::job_result))
  CAF_ADD_TYPE_ID(weir, (weir::job_slot_holder))
  CAF_ADD_TYPE_ID(weir, (weir::job_state))
  CAF_ADD_TYPE_ID(weir, (weir::job_status))
  CAF_ADD_TYPE_ID(weir, (weir::job_store_actor))
  CAF_ADD_TYPE_ID(weir, (weir::loaded_checkpoint))
  CAF_ADD_TYPE_ID(weir, (weir::local_code))
  CAF_ADD_TYPE_ID(weir, (weir::log_file))
  CAF_ADD_TYPE_ID(weir, (weir::recovered_jobs))
  CAF_ADD_TYPE_ID(weir, (weir::resource_id))
  CAF_ADD_TYPE_ID(weir, (weir::row_batch))
  CAF_ADD_TYPE_ID(weir, (weir::running_attempt))
  CAF_ADD_TYPE_ID(weir, (weir::row_delivery))
  CAF_ADD_TYPE_ID(weir, (weir::resource_manager_actor))
  CAF_ADD_TYPE_ID(weir, (weir::resource_manager_id))
  CAF_ADD_TYPE_ID(weir, (weir::resource_profile))
  CAF_ADD_TYPE_ID(weir, (weir::slot_report))
  CAF_ADD_TYPE_ID(weir, (weir::savepoint_data))
  CAF_ADD_TYPE_ID(weir, (weir::subtask_actor))
  CAF_ADD_TYPE_ID(weir, (weir::subtask_status))
  CAF_ADD_TYPE_ID(weir, (weir::subtask_wiring))
  CAF_ADD_TYPE_ID(weir, (weir::task_executor_actor))
  CAF_ADD_TYPE_ID(weir, (weir::task_load))
  CAF_ADD_TYPE_ID(weir, (weir::task_manager_info))
  CAF_ADD_TYPE_ID(weir, (weir::user_code))
  CAF_ADD_TYPE_ID(weir, (weir::vertex_metrics))
CAF_END_TYPE_ID_BLOCK(weir)

namespace weir {

void add_message_types(caf::actor_system_config& cfg) {
  cfg.add_message_types<caf::id_block::weir>();
  cfg.add_error_category(errc_category(), [](uint8_t code, caf::atom_value,
                                             const caf::message& ctx) {
    auto err = make_error(static_cast<errc>(code));
    err.context() = ctx;
    return "weir: " + describe(err);
  });
}

} // namespace weir
