#pragma once

#include <optional>
#include <string>

#include <cxxopts.hpp>

#include "config/config.hpp"

namespace weir::cli {

/// Adds `--config FILE` and `-Dkey=value` to an action's options.
void add_config_flags(cxxopts::Options& opts);

/// Loads the configuration the flags name (or the default file); prints a
/// one-line error and returns nothing when it is bad.
std::optional<configuration> load_config(const std::string& action,
                                         const cxxopts::ParseResult& flags);

/// Adds the configuration flags, parses an action's flags and loads the
/// configuration. Returns the configuration, or nothing with `exit_code` set
/// after printing the help (0) or a one-line error (2).
std::optional<configuration> parse_with_config(cxxopts::Options& opts,
                                               const std::string& action,
                                               const std::vector<std::string>& args,
                                               cxxopts::ParseResult& flags,
                                               int& exit_code);

/// The jobmanager address: `-m` if given, else jobmanager.rpc.address and
/// jobmanager.rpc.port from the configuration.
std::string jobmanager_address(const cxxopts::ParseResult& flags,
                               const configuration& cfg);

} // namespace weir::cli
