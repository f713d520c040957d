#pragma once

#include <optional>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "cli/job_args.hpp"

namespace weir::cli {

/// A job action's command line (`weir run`, `weir info`): the spec, its
/// program arguments, and weir's own flags parsed by the action's options.
struct job_command {
  job_args args;
  cxxopts::ParseResult flags;
};

/// Parses a job action's command line with `opts`, whose flags that take a
/// value are `value_flags`. Returns the command, or nothing after printing
/// the help (`exit_code` = 0) or a one-line error (`exit_code` = 2).
std::optional<job_command>
parse_job_command(const std::string& action, cxxopts::Options& opts,
                  const std::vector<std::string>& args,
                  const std::vector<std::string>& value_flags, int& exit_code);

/// The `-p`/`--parallelism` flag, if given.
std::optional<int32_t> parallelism_flag(const cxxopts::ParseResult& flags);

} // namespace weir::cli
