#pragma once

#include <map>
#include <string>
#include <vector>

#include <cxxopts.hpp>

namespace weir::cli {

/// The option group of positional arguments (JOBID, DIR): cxxopts reads
/// them as options, --help lists them in the usage line only.
inline const std::string positional_group = "positional";

/// The flags of an action's options ("-p", "--parallelism"), each with
/// whether it takes a value: the one source for checking a command line,
/// its --help and the docs check.
class flag_table {
public:
  explicit flag_table(const cxxopts::Options& opts);

  /// Adds the flags of `more` (say, driver mode's to `weir run`'s).
  void add(const cxxopts::Options& more);

  /// Checks one word that starts with '-' (not "--"): "" when it is a flag
  /// of the table, else why not. Short flags combine as in getopt: "-dn" is
  /// -d -n, and a short flag that takes a value takes the rest of the word
  /// ("-p4", "-Dkey=value"); a letter that is no flag makes the whole word
  /// unknown, so "-Dheartbeat..." is never read as "-h". `value_follows`:
  /// the next word is the flag's value.
  std::string check(const std::string& word, bool& value_follows) const;

  /// The flags that take a value.
  std::vector<std::string> value_flags() const;

private:
  std::map<std::string, bool> takes_value_;
};

/// Checks the flags of `args` against `table` (the words after a "--" are
/// not flags); "" or "unknown flag 'X'".
std::string check_flags(const flag_table& table,
                        const std::vector<std::string>& args);

/// The flags `--help` lists for `opts` (every group but the positional
/// one), as "-p" and "--parallelism".
std::vector<std::string> listed_flags(const cxxopts::Options& opts);

/// The help text of `opts`: every group but the positional one.
std::string help_text(const cxxopts::Options& opts);

} // namespace weir::cli
