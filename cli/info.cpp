#include <fmt/format.h>

#include <cxxopts.hpp>

#include "cli/actions.hpp"
#include "cli/exit_codes.hpp"
#include "cli/job_command.hpp"
#include "plan/chaining.hpp"

namespace weir::cli {

int info_action(const std::vector<std::string>& args) {
  cxxopts::Options opts("weir info",
                        "Print the execution plan of a job: vertices, "
                        "operator chains and edges.");
  opts.custom_help("SPEC [-p N] [--param VALUE ...]");
  opts.add_options()("p,parallelism", "default parallelism of the job",
                     cxxopts::value<int32_t>())("h,help", "print this help");
  opts.allow_unrecognised_options();
  int code = exit_ok;
  auto cmd = parse_job_command("info", opts, args, {"-p", "--parallelism"},
                               code);
  if (!cmd)
    return code;
  job_graph g;
  if (auto err = load_job(cmd->args, parallelism_flag(cmd->flags), g)) {
    fmt::print(stderr, "{}\n", *err);
    return exit_bad_input;
  }
  fmt::print("{}", describe_plan(g));
  return exit_ok;
}

} // namespace weir::cli
