#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cxxopts.hpp>

#include "cli/action_flags.hpp"
#include "cli/actions.hpp"
#include "cli/config_flags.hpp"
#include "process/exit_codes.hpp"
#include "cli/job_command.hpp"
#include "cli/job_keys.hpp"
#include "cli/user_code.hpp"
#include "config/config.hpp"
#include "messages/errors.hpp"
#include "operators/registry.hpp"
#include "plan/chaining.hpp"

namespace weir::cli {

cxxopts::Options info_flags() {
  cxxopts::Options opts("weir info",
                        "Print the execution plan of a job: vertices, "
                        "operator chains and edges. weir's flags go anywhere "
                        "after 'info'; --PARAM VALUE after the spec sets the "
                        "spec's parameter PARAM. Without a spec, --libjars "
                        "LIB lists the library's operators (their roles and "
                        "declared parameters: type, default, description) "
                        "and drivers.");
  opts.custom_help("SPEC [OPTIONS] [--PARAM VALUE ...] | --libjars LIB");
  opts.add_options()
    ("p,parallelism", "parallelism of the vertices that set none "
     "(parallelism.default; default: the spec's)", cxxopts::value<int32_t>())
    ("h,help", "print this help");
  // The user libraries of the job, so that its user operators are known.
  add_user_code_flags(opts);
  add_config_flags(opts);
  return opts;
}

namespace {

std::string roles_of(const ops::operator_factory& f) {
  std::vector<std::string> roles;
  if (f.make_source)
    roles.emplace_back("source");
  if (f.make_transform)
    roles.emplace_back(f.two_inputs ? "two-input transform" : "transform");
  if (f.make_sink)
    roles.emplace_back("sink");
  return fmt::format("{}", fmt::join(roles, ", "));
}

/// `weir info --libjars LIB` without a spec: what the libraries offer,
/// with the parameters their operators declare.
int list_library(const prepared_code& user) {
  auto& builtin = ops::registry::builtin();
  auto& reg = *user.operators;
  for (auto& lib : user.code.libraries)
    fmt::print("Library {}\n", lib.origin);
  size_t listed = 0;
  for (auto& name : reg.names()) {
    if (builtin.has_own(name))
      continue;
    auto& f = *reg.find(name);
    ++listed;
    fmt::print("Operator {} ({})\n", name, roles_of(f));
    if (f.declared_params.empty())
      fmt::print("  parameters: none declared\n");
    for (auto& p : f.declared_params)
      fmt::print("  {} ({}, {}): {}\n", p.name, p.type,
                 p.required ? "required"
                            : "default " + (p.fallback.empty()
                                               ? std::string{"none"}
                                               : p.fallback),
                 p.description);
  }
  for (auto& name : reg.driver_names()) {
    ++listed;
    fmt::print("Driver {} (weir run -D -c {} LIBRARY)\n", name, name);
  }
  if (listed == 0)
    fmt::print("(no operators or drivers)\n");
  return exit_ok;
}

} // namespace

int info_action(const std::vector<std::string>& args) {
  auto opts = info_flags();
  int code = exit_ok;
  auto cmd = parse_job_command("info", opts, args, code, {}, true);
  if (!cmd)
    return code;
  if (cmd->args.spec_path.empty()) {
    if (cmd->flags.count("libjars") == 0) {
      fmt::print(stderr, "weir info: missing job spec, or --libjars LIB to "
                         "list a library's operators (see weir info "
                         "--help)\n");
      return exit_bad_input;
    }
    auto user = prepare_user_code("info", cmd->flags);
    if (!user)
      return exit_bad_input;
    return list_library(*user);
  }
  auto cfg = load_config("weir info", cmd->flags);
  if (!cfg)
    return exit_bad_input;
  std::optional<int32_t> parallelism;
  if (!default_parallelism("weir info", *cfg, *cmd, parallelism))
    return exit_bad_input;
  auto user = prepare_user_code("info", cmd->flags);
  if (!user)
    return exit_bad_input;
  job_graph g;
  if (auto err = load_job(cmd->args, parallelism, g, user->operators)) {
    fmt::print(stderr, "{}\n", describe(err));
    return exit_bad_input;
  }
  if (report_first("weir info", {carry_job_keys(*cfg, g, job_target::embedded)}))
    return exit_bad_input;
  fmt::print("{}", describe_plan(g));
  // What the job would run with; a session cluster's configuration takes
  // the place of this one's for keys that neither the job nor -D set.
  fmt::print("Job settings (key = value, from):\n");
  for (auto& e : effective_job_config(*cfg, g.config, g.config_origins))
    fmt::print("  {} = {}  ({})\n", e.key, e.value,
               e.origin.rfind("cluster: ", 0) == 0 ? e.origin.substr(9)
                                                   : e.origin);
  return exit_ok;
}

} // namespace weir::cli
