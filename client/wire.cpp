#include "client/wire.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "messages/base64.hpp"
#include "messages/errors.hpp"

namespace weir {

// nlohmann's adl_serializer finds these in weir's namespace.

template <class Tag>
void to_json(nlohmann::json& j, const uuid_id<Tag>& x) {
  j = x.to_string();
}

template <class Tag>
void from_json(const nlohmann::json& j, uuid_id<Tag>& x) {
  auto parsed = uuid_id<Tag>::parse(j.get<std::string>());
  if (!parsed)
    throw std::invalid_argument(
      fmt::format("'{}' is not an id (32 hex characters)", j.get<std::string>()));
  x = *parsed;
}

namespace {

/// An enum as its name (to_string), read back by trying every value up to
/// `last`: a name this build does not know is an error, not a default.
template <class Enum, Enum Last>
struct enum_names {
  static void write(nlohmann::json& j, Enum x) {
    j = std::string{to_string(x)};
  }
  static void read(const nlohmann::json& j, Enum& x) {
    auto name = j.get<std::string>();
    for (int i = 0; i <= static_cast<int>(Last); ++i)
      if (std::string{to_string(static_cast<Enum>(i))} == name) {
        x = static_cast<Enum>(i);
        return;
      }
    throw std::invalid_argument(fmt::format("unknown value '{}'", name));
  }
};

using job_states = enum_names<job_state, job_state::suspended>;
using execution_states = enum_names<execution_state, execution_state::failed>;
using partitionings = enum_names<partitioning, partitioning::broadcast>;
using field_types = enum_names<field_type, field_type::timestamp>;

} // namespace

void to_json(nlohmann::json& j, job_state x) { job_states::write(j, x); }
void from_json(const nlohmann::json& j, job_state& x) { job_states::read(j, x); }
void to_json(nlohmann::json& j, execution_state x) {
  execution_states::write(j, x);
}
void from_json(const nlohmann::json& j, execution_state& x) {
  execution_states::read(j, x);
}
void to_json(nlohmann::json& j, partitioning x) { partitionings::write(j, x); }
void from_json(const nlohmann::json& j, partitioning& x) {
  partitionings::read(j, x);
}
void to_json(nlohmann::json& j, field_type x) { field_types::write(j, x); }
void from_json(const nlohmann::json& j, field_type& x) {
  field_types::read(j, x);
}

// job_priority starts below zero (daemon = -1): it travels as its number,
// checked.
void to_json(nlohmann::json& j, job_priority x) { j = static_cast<int>(x); }
void from_json(const nlohmann::json& j, job_priority& x) {
  auto n = j.get<int>();
  if (n < static_cast<int>(job_priority::daemon)
      || n > static_cast<int>(job_priority::driver))
    throw std::invalid_argument(fmt::format("unknown priority {}", n));
  x = static_cast<job_priority>(n);
}

// A batch of rows travels as base64 of its binary form (messages/
// row_batch.hpp): exact for every type, checked when read.
void to_json(nlohmann::json& j, const row_batch& x) {
  j = base64_encode(encode(x));
}
void from_json(const nlohmann::json& j, row_batch& x) {
  auto bytes = base64_decode(j.get<std::string>());
  if (!bytes || !decode(*bytes, x))
    throw std::invalid_argument("not a row batch (base64 of its binary form)");
}

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(field, name, type, nullable)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(schema, fields)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(collected_table, sink, fields,
                                                rows)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(vertex_metrics, vertex,
                                                records_in, records_out,
                                                counters, records_combined)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
  task_load, bytes_in, bytes_out, busy_ms, idle_ms, backpressured_ms,
  records_in_per_s, records_out_per_s, bytes_in_per_s, bytes_out_per_s,
  busy_ms_per_s, idle_ms_per_s, backpressured_ms_per_s, input_queue,
  output_queue, input_watermark, output_watermark)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(io_metrics, records_in,
                                                records_out, records_skipped,
                                                skipped_note, vertices, load)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(job_result, id, name, state,
                                                error, start_time_ms,
                                                end_time_ms, metrics,
                                                collected, graph_fingerprint,
                                                exit_status)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(subtask_status, task, subtask,
                                                parallelism, state, location,
                                                attempt, start_time_ms,
                                                end_time_ms, metrics)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(subtask_ack, task, subtask,
                                                ack_time_ms, state_size,
                                                alignment_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
  checkpoint_entry, id, status, savepoint, trigger_time_ms,
  latest_ack_time_ms, state_size, duration_ms, alignment_ms, subtasks,
  acknowledged, failure, external_path, stop, discarded, acks)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(stats_summary, min, max, avg,
                                                p50, p90, p95, p99, p999)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
  checkpoint_stats, restored, total, in_progress, completed, failed,
  restored_id, restore_time_ms, restored_savepoint, restored_path, history,
  latest_completed, latest_savepoint, latest_failed, state_size, duration)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(failure_entry, exception,
                                                time_ms, task, location,
                                                restart, restart_delay_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(resource_profile, cpu_cores,
                                                heap_mb, direct_mb, native_mb)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(
  job_status, id, name, state, start_time_ms, end_time_ms, error,
  subtasks_total, subtasks_running, subtasks_finished, metrics,
  attempt_metrics, restarts, subtasks, slot_profile, slots_needed,
  slots_missing, waiting_since_ms, waiting_for, recovered, checkpoints,
  exceptions)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(cancel_outcome, before, after)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(watermark_spec, field,
                                                max_out_of_orderness_ms,
                                                idle_timeout_ms, interval_ms)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(vertex_spec, id, op, params,
                                                parallelism, output, watermarks,
                                                side_outputs)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(edge_spec, from, to, part, key,
                                                output)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(blob_ref, name, hash, origin)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(user_code, libraries, files,
                                                classpath, always_ship)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(job_graph, id, name, vertices,
                                                edges, config, config_origins,
                                                code, priority, application)

} // namespace weir

namespace weir::wire {

nlohmann::json encode(const job_status& x) { return x; }
nlohmann::json encode(const std::vector<job_status>& xs) { return xs; }
nlohmann::json encode(const job_result& x) { return x; }
nlohmann::json encode(const cancel_outcome& x) { return x; }
nlohmann::json encode(const std::vector<collected_table>& xs) { return xs; }
nlohmann::json encode(const job_graph& x) { return x; }

template <class T>
caf::expected<T> decode(const nlohmann::json& j, std::string_view what) {
  try {
    return j.get<T>();
  } catch (const std::exception& e) {
    // nlohmann's messages start with "[json.exception.type_error.302] ".
    std::string text = e.what();
    if (auto end = text.find("] "); text.rfind("[json.", 0) == 0
                                    && end != std::string::npos)
      text.erase(0, end + 2);
    return make_error(errc::invalid_job, fmt::format("{}: {}", what, text));
  }
}

template caf::expected<job_status> decode(const nlohmann::json&,
                                          std::string_view);
template caf::expected<std::vector<job_status>>
decode(const nlohmann::json&, std::string_view);
template caf::expected<job_result> decode(const nlohmann::json&,
                                          std::string_view);
template caf::expected<cancel_outcome> decode(const nlohmann::json&,
                                              std::string_view);
template caf::expected<std::vector<collected_table>>
decode(const nlohmann::json&, std::string_view);
template caf::expected<job_graph> decode(const nlohmann::json&,
                                         std::string_view);

} // namespace weir::wire
