#include "storage/job_result_store.hpp"

#include "messages/errors.hpp"
#include "storage/detail/job_result_codec.hpp"
#include "storage/detail/typed_table.hpp"

namespace weir::storage {

bool operator==(const job_result_entry& a, const job_result_entry& b) {
  return a.result == b.result && a.dirty == b.dirty;
}

caf::error job_result_store::put_dirty(const job_result& r) {
  return kv_.put(column::job_results, r.id.to_string(),
                 detail::encode_job_result(r, true), durability::synced);
}

caf::error job_result_store::put_clean(const job_result& r) {
  return kv_.put(column::job_results, r.id.to_string(),
                 detail::encode_job_result(r, false), durability::synced);
}

caf::error job_result_store::mark_clean(job_id id) {
  auto entry = get(id);
  if (!entry)
    return std::move(entry.error());
  if (!*entry)
    return make_error(errc::unknown_job,
                      key_name(column::job_results, id.to_string())
                        + ": no result stored");
  if (!(*entry)->dirty)
    return caf::none;
  return kv_.put(column::job_results, id.to_string(),
                 detail::encode_job_result((*entry)->result, false),
                 durability::synced);
}

caf::expected<std::optional<job_result_entry>>
job_result_store::get(job_id id) {
  return detail::get_decoded<job_result_entry>(kv_, column::job_results,
                                               id.to_string(),
                                               detail::decode_job_result);
}

caf::expected<stored_results> job_result_store::load_all() {
  stored_results result;
  if (auto err = detail::scan_decoded(kv_, column::job_results,
                                      detail::decode_job_result, result.entries,
                                      result.problems))
    return err;
  return result;
}

} // namespace weir::storage
