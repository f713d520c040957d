#pragma once

#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "actors/resource_manager/worker_launcher.hpp"

namespace weir::cli {

/// The options of `weir taskmanager`, --config and -D included.
cxxopts::Options taskmanager_flags();

/// The `weir taskmanager` arguments that start the worker `w` (totals of
/// its slots' profile as --cpu-cores/--memory/--direct-memory/
/// --native-memory), logging to `<log_dir>/<id>.log`, followed by
/// `config_args` (the jobmanager's --config and -D flags).
std::vector<std::string> taskmanager_arguments(const worker_request& w,
                                               const std::string& log_dir,
                                               const std::vector<std::string>& config_args);

} // namespace weir::cli
