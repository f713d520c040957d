#include "client/submission.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "config/input_file.hpp"
#include "config/keys.hpp"
#include "messages/errors.hpp"
#include "messages/file_names.hpp"
#include "operators/driver_services.hpp"
#include "plan/job_spec.hpp"
#include "plan/savepoint_fit.hpp"
#include "storage/blob_store.hpp"
#include "storage/checkpoint_store.hpp"

namespace weir::client {

caf::error check_restore_file(std::string& path, savepoint_data* data) {
  // Flink's savepoint locations are file: URIs.
  path = std::filesystem::absolute(local_path(path)).lexically_normal().string();
  if (auto problem = special_file_problem(path); !problem.empty())
    return make_error(errc::invalid_config,
                      fmt::format("{}: {}", path, problem));
  auto sp = storage::read_savepoint(path);
  if (!sp)
    return std::move(sp.error());
  if (data != nullptr)
    *data = std::move(*sp);
  return {};
}

caf::expected<job_graph> plan_job(const std::string& spec_json,
                                  const std::string& origin,
                                  const job_settings& settings,
                                  const ops::registry& operators) {
  auto spec = parse_job_spec_text(spec_json, origin);
  if (!spec)
    return spec.error();
  for (auto& [key, value] : settings.config)
    spec->config[key] = value;
  auto graph = resolve_job_graph(*spec, {}, settings.parallelism, &operators);
  if (!graph)
    return graph.error();
  if (settings.savepoint_path.empty()) {
    if (settings.allow_non_restored_state)
      return make_error(errc::invalid_config,
                        "allow_non_restored_state needs a savepoint path");
    return graph;
  }
  auto path = settings.savepoint_path;
  savepoint_data sp;
  if (auto err = check_restore_file(path, &sp))
    return make_error(errc::invalid_config,
                      fmt::format("savepoint: {}", describe(err)));
  if (auto err = check_savepoint_fits(*graph, sp,
                                      settings.allow_non_restored_state, path,
                                      operators))
    return err;
  graph->config[std::string{keys::savepoint_path.name}] = path;
  if (settings.allow_non_restored_state)
    graph->config[std::string{keys::savepoint_ignore_unclaimed_state.name}]
      = "true";
  return graph;
}

caf::expected<blob_ref>
read_blob(const std::string& what, const std::string& path,
          std::vector<std::pair<std::string, std::string>>& blobs) {
  auto file = storage::read_user_file(path);
  if (file.not_a_file)
    return make_error(errc::invalid_job,
                      what + " '" + path + "' is not a readable file");
  if (!file.ok())
    return make_error(errc::invalid_job, what + " '" + path
                                           + "' cannot be read: "
                                           + file.read_error);
  blobs.emplace_back(file.ref.hash, std::move(file.bytes));
  return file.ref;
}

caf::expected<job_id>
submit(job_service& jobs, const job_graph& g,
       std::vector<std::pair<std::string, std::string>> blobs) {
  for (auto& [hash, bytes] : blobs)
    if (auto err = jobs.put_blob(hash, std::move(bytes)))
      return err;
  return jobs.submit(g);
}

void drop_partial_rows(job_result& result) {
  if (result.finished())
    return;
  for (auto& t : result.collected)
    t.rows.reset(t.fields);
}

job_graph driver_job_graph(const driver_request& r) {
  job_graph g;
  g.name = "driver " + r.name;
  vertex_spec driver{"driver", ops::driver_operator_name, {}, 1, {}};
  driver.params["class"] = r.name;
  driver.params["args"] = ops::encode_driver_args(r.args);
  if (r.parallelism)
    driver.params["parallelism"] = std::to_string(*r.parallelism);
  if (!r.savepoint_path.empty()) {
    driver.params["savepoint"] = r.savepoint_path;
    if (r.allow_non_restored_state)
      driver.params["allow-non-restored"] = "true";
  }
  g.vertices.push_back(std::move(driver));
  g.vertices.push_back(vertex_spec{"output", "collect", {}, 1, {}});
  g.edges.push_back(edge_spec{"driver", "output", partitioning::forward, {}});
  g.priority = job_priority::driver;
  return g;
}

} // namespace weir::client
