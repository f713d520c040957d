#include "cli/job_command.hpp"

#include <fmt/format.h>

#include "cli/exit_codes.hpp"

namespace weir::cli {

std::optional<job_command>
parse_job_command(const std::string& action, cxxopts::Options& opts,
                  const std::vector<std::string>& args,
                  const std::vector<std::string>& value_flags, int& exit_code) {
  exit_code = exit_bad_input;
  job_args ja;
  auto known = value_flags;
  known.insert(known.end(), {"-h", "--help", "-d", "--detached"});
  if (auto err = split_job_args(action, args, value_flags, known, ja)) {
    fmt::print(stderr, "{}\n", *err);
    return std::nullopt;
  }
  try {
    std::vector<const char*> argv;
    for (auto& a : ja.weir_args)
      argv.push_back(a.c_str());
    auto res = opts.parse(static_cast<int>(argv.size()), argv.data());
    if (res.count("help") > 0) {
      fmt::print("{}", opts.help());
      exit_code = exit_ok;
      return std::nullopt;
    }
    if (!res.unmatched().empty()) {
      fmt::print(stderr, "weir {}: unknown flag '{}' (see weir {} --help)\n",
                 action, res.unmatched().front(), action);
      return std::nullopt;
    }
    if (ja.spec_path.empty()) {
      fmt::print(stderr, "weir {}: missing job spec (see weir {} --help)\n",
                 action, action);
      return std::nullopt;
    }
    return job_command{std::move(ja), std::move(res)};
  } catch (const cxxopts::exceptions::exception& e) {
    fmt::print(stderr, "weir {}: {}\n", action, e.what());
    return std::nullopt;
  }
}

std::optional<int32_t> parallelism_flag(const cxxopts::ParseResult& flags) {
  if (flags.count("parallelism") == 0)
    return std::nullopt;
  return flags["parallelism"].as<int32_t>();
}

} // namespace weir::cli
