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

/// An error when the command line (-D) already sets `key` to another value
/// than `value` (from `origin`), or for high-availability.storageDir, a
/// file does: "--state-dir /a and -Dhigh-availability.storageDir=/b both
/// set 'high-availability.storageDir'; give one". A file's other values
/// yield to the command line's.
[[nodiscard]] caf::error conflicting_values(const configuration& cfg, const key_info& key,
                              const std::string& value,
                              const std::string& origin);

/// flag_overrides and flag_replaces: `refuse_conflict` says which.
template <class Flag, class T>
[[nodiscard]] caf::error apply_flag(configuration& cfg, const cxxopts::ParseResult& flags,
                      const std::string& flag, const config_key<T>& key,
                      const char* unit, const std::string& typed,
                      bool refuse_conflict) {
  if (flags.count(flag) == 0)
    return caf::none;
  auto value = flags[flag].template as<Flag>();
  auto origin = fmt::format("{} {}", typed.empty() ? "--" + flag : typed,
                            value);
  auto text = fmt::format("{}{}", value, unit);
  if (refuse_conflict)
    if (auto err = conflicting_values(cfg, key.info(), text, origin))
      return err;
  return cfg.apply({{std::string{key.name}, text}}, origin);
}

/// A flag is a key's other spelling: when `flag` was given, its value
/// (with `unit` appended, "m" for a flag in MB) becomes `key`'s in `cfg`
/// (options are then built from `cfg` alone), with the flag as the value's
/// origin: `typed` (how the user wrote it, "-p"; default "--" + flag) and
/// the value. The error names that origin, the key and its range; a
/// conflicting value (conflicting_values) is refused, naming both.
template <class Flag, class T>
[[nodiscard]] caf::error flag_overrides(configuration& cfg, const cxxopts::ParseResult& flags,
                          const std::string& flag, const config_key<T>& key,
                          const char* unit = "", const std::string& typed = "") {
  return apply_flag<Flag>(cfg, flags, flag, key, unit, typed, true);
}

/// As flag_overrides, but the flag replaces a value of the file or -D: how
/// a launcher sizes one worker of a cluster whose configuration it passes
/// on (`weir taskmanager`).
template <class Flag, class T>
[[nodiscard]] caf::error flag_replaces(configuration& cfg, const cxxopts::ParseResult& flags,
                         const std::string& flag, const config_key<T>& key,
                         const char* unit = "") {
  return apply_flag<Flag>(cfg, flags, flag, key, unit, "", false);
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
