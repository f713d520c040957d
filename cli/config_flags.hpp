#pragma once

#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include <cxxopts.hpp>
#include <fmt/format.h>

#include "config/config.hpp"

namespace weir::cli {

/// Adds `--config FILE` and `-Dkey=value` to an action's options.
void add_config_flags(cxxopts::Options& opts);

/// The values of -D, one per flag and in order, commas and all.
std::vector<std::string> dynamic_flags(const cxxopts::ParseResult& flags);

/// Loads the configuration the flags name (or the default file); prints a
/// one-line error and returns nothing when it is bad.
std::optional<configuration> load_config(const std::string& action,
                                         const cxxopts::ParseResult& flags);

/// Parses an action's flags (its options hold the configuration flags) and
/// loads the configuration. Returns the configuration, or nothing with `exit_code` set
/// after printing the help (0) or a one-line error (2).
std::optional<configuration> parse_with_config(cxxopts::Options& opts,
                                               const std::string& action,
                                               const std::vector<std::string>& args,
                                               cxxopts::ParseResult& flags,
                                               int& exit_code);

/// The --config and -D flags as given, to pass them on to a process started
/// from this one (a worker gets its jobmanager's configuration).
std::vector<std::string> config_args(const cxxopts::ParseResult& flags);

/// Flags win over configuration keys: when `flag` was given, its value
/// (with `unit` appended, "m" for a flag in MB) replaces `key`'s in `cfg`
/// (options are then built from `cfg` alone), with the flag as the value's
/// origin: `typed` (how the user wrote it, "-p"; default "--" + flag) and
/// the value. The error names that origin, the key and its range.
template <class Flag, class T>
caf::error flag_overrides(configuration& cfg, const cxxopts::ParseResult& flags,
                          const std::string& flag, const config_key<T>& key,
                          const char* unit = "", const std::string& typed = "") {
  if (flags.count(flag) == 0)
    return caf::none;
  auto value = flags[flag].template as<Flag>();
  auto origin = fmt::format("{} {}", typed.empty() ? "--" + flag : typed,
                            value);
  return cfg.apply({{std::string{key.name}, fmt::format("{}{}", value, unit)}},
                   origin);
}

/// Prints the first of `errors` as `action: error`; whether there was one.
bool report_first(const std::string& action,
                  std::initializer_list<caf::error> errors);

/// The jobmanager address: `-m` if given, else jobmanager.rpc.address and
/// jobmanager.rpc.port from the configuration.
std::string jobmanager_address(const cxxopts::ParseResult& flags,
                               const configuration& cfg);

/// The line saying that jobmanager_address() is not HOST:PORT[,...], naming
/// where it came from: "-m 'x' is not HOST:PORT", or the keys and their
/// origins.
std::string bad_jobmanager_address(const cxxopts::ParseResult& flags,
                                   const configuration& cfg);

} // namespace weir::cli
