#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "client/submission.hpp"
#include "messages/checkpoint.hpp"
#include "messages/job_graph.hpp"

namespace weir::ops {
class registry;
} // namespace weir::ops

namespace weir::cli {

class flag_table;

/// A job action's command line taken apart: the spec, weir's own flags and
/// the program arguments (`--param value`) that override job params.
struct job_args {
  std::string spec_path;
  std::vector<std::string> weir_args; ///< for cxxopts, program name first
  std::map<std::string, std::string> program_args;
};

/// Finds the spec path (the first argument that is neither a flag nor a
/// flag's value) and splits the command line: weir's own flags (`flags`)
/// may come anywhere; after the spec, `--NAME VALUE` (or `--NAME=VALUE`)
/// where NAME is a parameter of the spec is a program argument, even when
/// weir has a flag of that name (give that flag before the spec). Any
/// other argument is an error (errc::invalid_config, one line).
[[nodiscard]] caf::error split_job_args(const std::string& action,
                                        const std::vector<std::string>& args,
                                        const flag_table& flags,
                                        job_args& out);

/// Loads the spec and builds the JobGraph with program arguments and the
/// `-p` default, checking operators against `operators` (default: the
/// built-in ones). Fails with the loader's error.
[[nodiscard]] caf::error load_job(const job_args& args,
                                  std::optional<int32_t> parallelism,
                                  job_graph& out,
                                  const ops::registry* operators = nullptr);

/// The newest `chk-<n>` file under `dir` (highest n), or "" (`-r DIR`).
/// Checkpoint numbers of different jobs say nothing about which is newer:
/// when `dir` holds checkpoints of several jobs (several `<job id>/`
/// directories), fails (errc::invalid_config) naming them.
[[nodiscard]] caf::expected<std::string>
newest_checkpoint(const std::string& dir);

/// Checks a savepoint or checkpoint file a job is to start from (`-s`,
/// `-r`): the C++ API's check (client/submission.hpp).
using client::check_restore_file;

} // namespace weir::cli
