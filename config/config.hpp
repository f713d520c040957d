#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include "config/config_key.hpp"

namespace weir {

/// One set key: its value as written and where it came from.
struct config_entry {
  std::string key;
  std::string value;
  std::string origin;
};

/// A checked configuration: a YAML file (Flink's flat `key: value` form, or
/// nested maps) overridden by `-Dkey=value` dynamic properties. Unknown keys
/// and values of the wrong type are errors (`errc::invalid_config`) naming
/// the key and where it came from. Values are read with `get(keys::...)`.
class configuration {
public:
  /// Defaults only.
  configuration() = default;

  /// Reads `file` when given (a missing file is an error), then applies
  /// `dynamic` ("key=value" each) and checks the keys that depend on each
  /// other (heartbeats, registration backoff).
  [[nodiscard]] static caf::expected<configuration>
  load(const std::optional<std::string>& file,
       const std::vector<std::string>& dynamic);

  /// Applies `values` (say, a job's own settings, or a flag's value) on top;
  /// the error names `origin` and the key, and `origin` is each value's
  /// origin from then on.
  [[nodiscard]] caf::error apply(const std::map<std::string, std::string>& values,
                   const std::string& origin);

  /// The value of `key`: the file's or a dynamic property's, else the
  /// key's default.
  template <class T>
  T get(const config_key<T>& key) const;

  /// The value of `key` if the file or a dynamic property set it.
  template <class T>
  std::optional<T> get_if_set(const config_key<T>& key) const {
    if (!is_set(key))
      return std::nullopt;
    return get(key);
  }

  /// Whether the file or a dynamic property set `key`.
  template <class T>
  bool is_set(const config_key<T>& key) const {
    return values_.count(std::string{key.name}) > 0;
  }

  /// Where the value of `key` came from: "FILE:LINE", "-Dkey=value", or the
  /// origin given to apply() ("--slots 4"); "" when it is the default.
  template <class T>
  std::string origin(const config_key<T>& key) const {
    auto i = origins_.find(std::string{key.name});
    return i == origins_.end() ? std::string{} : i->second;
  }

  /// Every key the file, `-D` or apply() set, by name.
  std::vector<config_entry> entries() const;

  /// The keys starting with `prefix` that the file or `-D` set.
  std::map<std::string, std::string> set_with_prefix(const std::string& prefix) const;

private:
  /// Checks and stores one value from `origin`; "" or a problem.
  std::string set(const std::string& key, const std::string& value,
                  const std::string& origin);
  /// The set value of a key, else its default.
  std::string raw(std::string_view key, std::string_view default_value) const;
  /// Cross-checks of keys that depend on each other.
  [[nodiscard]] caf::error check_consistency() const;

  std::map<std::string, std::string> values_;
  std::map<std::string, std::string> origins_; ///< of each set value
};

/// Checks that a job sets only keys of scope `config_scope::job` (its
/// spec's `config`); the error (`errc::invalid_config`) names the first
/// other key.
[[nodiscard]] caf::error check_job_config(const std::map<std::string, std::string>& keys);

/// Whether `origin` (a config_entry's) is the command line: -D or a flag
/// ("-Dkey=value", "--slots 4"), not a file.
bool from_command_line(const std::string& origin);

/// Every per-job key with a value, as a job sees it: its own (`own`, from
/// `origins`, else "job config"), else the cluster's ("cluster: ORIGIN"),
/// else the default ("default"). By key.
std::vector<config_entry>
effective_job_config(const configuration& cluster,
                     const std::map<std::string, std::string>& own,
                     const std::map<std::string, std::string>& origins);

/// The default configuration file: $WEIR_CONF_DIR/weir.yaml when that
/// variable is set, else $XDG_CONFIG_HOME/weir/weir.yaml (~/.config/...)
/// when that file exists; nothing otherwise.
std::optional<std::string> default_config_file();

} // namespace weir
