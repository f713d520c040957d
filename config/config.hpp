#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <caf/expected.hpp>

namespace weir {

/// The type of a configuration value.
enum class config_type {
  integer,  ///< a whole number
  number,   ///< a decimal number
  boolean,  ///< true or false
  text,     ///< any string
  duration, ///< "500 ms", "10 s", "1 min"; a bare number means milliseconds
  memory,   ///< "512m", "1g", "256 mb"; a bare number means bytes
};

std::string to_string(config_type t);

/// One configuration key: Flink's name, its type, default and meaning.
struct config_key {
  std::string name;
  config_type type;
  std::string default_value; ///< "" = no default (unset)
  std::string meaning;
  std::vector<std::string> choices = {}; ///< allowed values (text keys)
};

/// Every key weir reads; docs/configuration.md lists the same keys.
const std::vector<config_key>& config_keys();

/// A checked configuration: a YAML file (Flink's flat `key: value` form, or
/// nested maps) overridden by `-Dkey=value` dynamic properties. Unknown keys
/// and values of the wrong type are errors naming the key and where it came
/// from.
class configuration {
public:
  /// Defaults only.
  configuration() = default;

  /// Reads `file` when given (a missing file is an error), then applies
  /// `dynamic` ("key=value" each).
  static caf::expected<configuration>
  load(const std::optional<std::string>& file,
       const std::vector<std::string>& dynamic);

  /// Applies `values` (say, a job's own settings) on top; the error names
  /// `origin` and the key.
  caf::error apply(const std::map<std::string, std::string>& values,
                   const std::string& origin);

  /// The keys starting with `prefix` that the file or `-D` set.
  std::map<std::string, std::string> set_with_prefix(const std::string& prefix) const;

  /// Whether the file or a dynamic property set `key`.
  bool is_set(const std::string& key) const;

  int64_t integer(const std::string& key) const;
  double number(const std::string& key) const;
  bool boolean(const std::string& key) const;
  std::string text(const std::string& key) const;
  std::chrono::milliseconds duration(const std::string& key) const;
  /// A memory size in MiB.
  int64_t memory_mb(const std::string& key) const;

private:
  /// Checks and stores one value; "" or a problem.
  std::string set(const std::string& key, const std::string& value);
  const std::string& raw(const std::string& key) const;

  std::map<std::string, std::string> values_;
};

/// The keys a job may set for itself (its spec's `config`): the restart
/// strategy. Returns "" or one line naming the first other key.
std::string check_job_config_keys(const std::map<std::string, std::string>& keys);

/// The default configuration file: $WEIR_CONF_DIR/weir.yaml when that
/// variable is set, else $XDG_CONFIG_HOME/weir/weir.yaml (~/.config/...)
/// when that file exists; nothing otherwise.
std::optional<std::string> default_config_file();

} // namespace weir
