#include "storage/finish_job.hpp"

#include "storage/detail/job_result_codec.hpp"

namespace weir::storage {

caf::error finish_job(kv_store& kv, const job_result& result,
                      write_batch cleanup) {
  auto key = result.id.to_string();
  auto dirty = detail::encode_job_result(result, true);
  if (auto err = kv.put(column::job_results, key, dirty, durability::synced))
    return err;
  cleanup.remove(column::job_graphs, key);
  cleanup.put(column::job_results, key,
              detail::encode_job_result(result, false));
  return kv.write(cleanup, durability::synced);
}

} // namespace weir::storage
