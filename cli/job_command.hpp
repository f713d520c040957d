#pragma once

#include <optional>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "cli/job_args.hpp"
#include "config/config.hpp"

namespace weir::cli {

/// A job action's command line (`weir run`, `weir info`): the spec, its
/// program arguments, and weir's own flags parsed by the action's options.
struct job_command {
  job_args args;
  cxxopts::ParseResult flags;
};

/// Parses a job action's command line with `opts` (weir's flags anywhere
/// after the action, job parameters after the spec). Returns the command,
/// or nothing after printing the help followed by `more_help` (`exit_code`
/// = 0) or a one-line error (`exit_code` = 2). A missing spec is an error
/// unless `spec_optional` (the command's spec_path is then empty).
std::optional<job_command>
parse_job_command(const std::string& action, cxxopts::Options& opts,
                  const std::vector<std::string>& args, int& exit_code,
                  const std::string& more_help = "",
                  bool spec_optional = false);

/// The job's default parallelism: `-p` (which sets parallelism.default in
/// `cfg`), else parallelism.default from `-D` or the configuration file,
/// else nothing (the spec's). Prints a one-line error naming where a bad
/// value came from and returns false.
bool default_parallelism(const std::string& action, configuration& cfg,
                         const job_command& cmd, std::optional<int32_t>& out);

/// How `flag` (a long name, "parallelism") was last typed in `words`:
/// `short_form` ("-p") or "--" + flag.
std::string typed_flag(const std::vector<std::string>& words,
                       const std::string& short_form, const std::string& flag);

} // namespace weir::cli
