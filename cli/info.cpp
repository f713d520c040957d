#include <fmt/format.h>

#include <cxxopts.hpp>

#include "cli/actions.hpp"
#include "cli/exit_codes.hpp"
#include "cli/job_args.hpp"
#include "client/chaining.hpp"

namespace weir::cli {

int info_action(const std::vector<std::string>& args) {
  cxxopts::Options opts("weir info",
                        "Print the execution plan of a job: vertices, "
                        "operator chains and edges.");
  opts.custom_help("SPEC [-p N] [--param VALUE ...]");
  opts.add_options()("p,parallelism", "default parallelism of the job",
                     cxxopts::value<int32_t>())("h,help", "print this help");
  opts.allow_unrecognised_options();
  job_args ja;
  if (auto err = split_job_args("info", args, {"-p", "--parallelism"},
                                {"-p", "--parallelism", "-h", "--help"}, ja)) {
    fmt::print(stderr, "{}\n", *err);
    return exit_bad_input;
  }
  try {
    std::vector<const char*> argv;
    for (auto& a : ja.weir_args)
      argv.push_back(a.c_str());
    auto res = opts.parse(static_cast<int>(argv.size()), argv.data());
    if (res.count("help") > 0) {
      fmt::print("{}", opts.help());
      return exit_ok;
    }
    if (!res.unmatched().empty()) {
      fmt::print(stderr, "weir info: unknown flag '{}' (see weir info --help)\n",
                 res.unmatched().front());
      return exit_bad_input;
    }
    if (ja.spec_path.empty()) {
      fmt::print(stderr, "weir info: missing job spec (see weir info --help)\n");
      return exit_bad_input;
    }
    std::optional<int32_t> p;
    if (res.count("parallelism") > 0)
      p = res["parallelism"].as<int32_t>();
    job_graph g;
    if (auto err = load_job(ja, p, g)) {
      fmt::print(stderr, "{}\n", *err);
      return exit_bad_input;
    }
    fmt::print("{}", describe_plan(g));
    return exit_ok;
  } catch (const cxxopts::exceptions::exception& e) {
    fmt::print(stderr, "weir info: {}\n", e.what());
    return exit_bad_input;
  }
}

} // namespace weir::cli
