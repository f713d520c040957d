#include "cli/config_flags.hpp"

#include <fmt/format.h>

#include "process/exit_codes.hpp"
#include "cli/remote.hpp"
#include "config/keys.hpp"
#include "config/parse.hpp"
#include "messages/errors.hpp"

namespace weir::cli {

void add_config_flags(cxxopts::Options& opts) {
  opts.add_options()
    ("config", "configuration file (YAML, Flink's key names; default "
     "$WEIR_CONF_DIR/weir.yaml or ~/.config/weir/weir.yaml if it exists)",
     cxxopts::value<std::string>())
    ("D", "set a configuration key: -Dkey=value (repeatable)",
     cxxopts::value<std::vector<std::string>>());
}

std::vector<std::string> dynamic_flags(const cxxopts::ParseResult& flags) {
  // In the order given, as given: cxxopts's own vector would split
  // "-Dhigh-availability.etcd.endpoints=h1:2379,h2:2379" at its comma.
  std::vector<std::string> out;
  for (auto& kv : flags.arguments())
    if (kv.key() == "D")
      out.push_back(kv.value());
  return out;
}

std::optional<configuration> load_config(const std::string& action,
                                         const cxxopts::ParseResult& flags) {
  auto file = flags.count("config") > 0
                ? std::optional<std::string>{flags["config"].as<std::string>()}
                : default_config_file();
  auto cfg = configuration::load(file, dynamic_flags(flags));
  if (!cfg) {
    fmt::print(stderr, "{}: {}\n", action, describe(cfg.error()));
    return std::nullopt;
  }
  return std::move(*cfg);
}

std::optional<configuration> parse_with_config(cxxopts::Options& opts,
                                               const std::string& action,
                                               const std::vector<std::string>& args,
                                               cxxopts::ParseResult& flags,
                                               int& exit_code) {
  if (auto code = parse_flags(opts, action, args, flags); code >= 0) {
    exit_code = code;
    return std::nullopt;
  }
  auto cfg = load_config(action, flags);
  if (!cfg)
    exit_code = exit_bad_input;
  return cfg;
}

caf::error conflicting_values(const configuration& cfg, const key_info& key,
                              const std::string& value,
                              const std::string& origin) {
  // A file is the base that the command line overrides (Flink's
  // precedence), but not where jobs are stored: a state directory taken
  // from the wrong place recovers other jobs or none.
  bool file_yields = key.name != keys::storage_dir.name;
  for (auto& e : cfg.entries())
    if (e.key == key.name && !detail::same_value(key, e.value, value)
        && (!file_yields || from_command_line(e.origin)))
      return make_error(errc::invalid_config,
                        fmt::format("{} and {} both set '{}'; give one",
                                    origin, e.origin, key.name));
  return caf::none;
}

bool report_first(const std::string& action,
                  std::initializer_list<caf::error> errors) {
  for (auto& err : errors) {
    if (err) {
      fmt::print(stderr, "{}: {}\n", action, describe(err));
      return true;
    }
  }
  return false;
}

std::vector<std::string> config_args(const cxxopts::ParseResult& flags) {
  std::vector<std::string> args;
  if (flags.count("config") > 0)
    args = {"--config", flags["config"].as<std::string>()};
  for (auto& d : dynamic_flags(flags))
    args.push_back("-D" + d);
  return args;
}

std::string jobmanager_address(const cxxopts::ParseResult& flags,
                               const configuration& cfg) {
  if (flags.count("jobmanager") > 0)
    return flags["jobmanager"].as<std::string>();
  return fmt::format("{}:{}", cfg.get(keys::jobmanager_address),
                     cfg.get(keys::jobmanager_port));
}

std::string bad_jobmanager_address(const cxxopts::ParseResult& flags,
                                   const configuration& cfg) {
  auto address = jobmanager_address(flags, cfg);
  if (flags.count("jobmanager") > 0)
    return fmt::format("-m '{}' is not HOST:PORT or etcd://HOST:PORT", address);
  auto from = [&](const auto& key) {
    auto origin = cfg.origin(key);
    return origin.empty() ? std::string{"default"} : origin;
  };
  return fmt::format("jobmanager.rpc.address '{}' ({}) and jobmanager.rpc.port "
                     "{} ({}) give '{}', which is not HOST:PORT (no -m given)",
                     cfg.get(keys::jobmanager_address),
                     from(keys::jobmanager_address),
                     cfg.get(keys::jobmanager_port), from(keys::jobmanager_port),
                     address);
}

} // namespace weir::cli
