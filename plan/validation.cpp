#include "plan/validation.hpp"

#include <fmt/format.h>

#include "config/config.hpp"
#include "messages/errors.hpp"
#include "messages/file_names.hpp"
#include "operators/registry.hpp"
#include "plan/chaining.hpp"
#include "plan/paths.hpp"

namespace weir {

namespace {

std::string vertex_name(const validation_options& opts, size_t index,
                        const std::string& id) {
  if (opts.naming == vertex_naming::by_position)
    return fmt::format("vertices[{}] ('{}')", index, id);
  return fmt::format("vertex '{}'", id);
}

caf::error check_config(const job_graph& g) {
  if (auto err = configuration{}.apply(g.config, "config"))
    return err;
  if (auto err = check_job_config(g.config))
    return make_error(errc::invalid_config, "config: " + describe(err));
  // Origins are shown as they came: bounded, and only of keys the job sets.
  constexpr size_t max_origin_bytes = 1024;
  for (auto& [key, origin] : g.config_origins) {
    if (g.config.count(key) == 0)
      return make_error(errc::invalid_config,
                        fmt::format("config_origins: '{}' is not a key of "
                                    "the job's config",
                                    key.substr(0, 128)));
    if (origin.size() > max_origin_bytes)
      return make_error(errc::invalid_config,
                        fmt::format("config_origins: the origin of '{}' is "
                                    "longer than {} bytes",
                                    key, max_origin_bytes));
  }
  return caf::none;
}

const ops::registry& registry_of(const validation_options& opts) {
  return opts.operators != nullptr ? *opts.operators
                                   : ops::registry::builtin();
}

caf::error check_operators(const job_graph& g,
                           const validation_options& opts) {
  auto& reg = registry_of(opts);
  for (size_t i = 0; i < g.vertices.size(); ++i) {
    auto& v = g.vertices[i];
    // User operators this registry lacks are checked where their libraries
    // load (the workers).
    if (!g.code.empty() && reg.find(v.op) == nullptr)
      continue;
    auto problem = reg.check(v.op, vertex_role(g, static_cast<int32_t>(i)),
                             v.params, opts.files);
    if (!problem.empty())
      return make_error(errc::invalid_job,
                        fmt::format("{}: {}", vertex_name(opts, i, v.id),
                                    problem));
  }
  return caf::none;
}

} // namespace

caf::error validate_job_graph(const job_graph& g,
                              const validation_options& opts) {
  if (auto err = check_config(g))
    return err;
  if (auto err = check_job_graph_shape(g))
    return err;
  if (auto err = check_user_code(g.code))
    return make_error(errc::invalid_job, describe(err));
  if (auto err = check_operators(g, opts))
    return err;
  return check_output_paths(g, registry_of(opts), opts.files, [&](size_t i) {
    return vertex_name(opts, i, g.vertices[i].id);
  });
}

validation_options client_validation(const ops::registry* operators) {
  return {operators, ops::file_checks::on, vertex_naming::by_position};
}

validation_options dispatcher_validation() {
  return {nullptr, ops::file_checks::off, vertex_naming::by_id};
}

} // namespace weir
