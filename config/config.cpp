#include "config/config.hpp"

#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "config/input_file.hpp"
#include "config/keys.hpp"
#include "config/parse.hpp"
#include "messages/errors.hpp"

namespace weir {

namespace {

caf::error config_error(std::string what) {
  return make_error(errc::invalid_config, std::move(what));
}

/// Flattens nested YAML maps into dotted keys.
void flatten(const YAML::Node& node, const std::string& prefix,
             std::vector<std::pair<std::string, YAML::Node>>& out) {
  if (node.IsMap()) {
    for (auto it = node.begin(); it != node.end(); ++it) {
      auto key = it->first.as<std::string>();
      flatten(it->second, prefix.empty() ? key : prefix + "." + key, out);
    }
    return;
  }
  out.emplace_back(prefix, node);
}

/// The flattened entries of a YAML file. yaml-cpp reports problems by
/// throwing; they end here.
caf::expected<std::vector<std::pair<std::string, YAML::Node>>>
read_yaml(const std::string& file) {
  std::vector<std::pair<std::string, YAML::Node>> entries;
  auto input = read_input_file(file);
  if (!input.problem.empty())
    return config_error(fmt::format(
      "{}: cannot read the configuration file: {}", file, input.problem));
  try {
    auto root = YAML::Load(input.text);
    if (root.IsDefined() && !root.IsNull()) {
      if (!root.IsMap())
        return config_error(
          fmt::format("{}: expected a map of keys to values", file));
      flatten(root, "", entries);
    }
  } catch (const YAML::Exception& e) {
    return config_error(fmt::format("{}:{}:{}: {}", file, e.mark.line + 1,
                                    e.mark.column + 1, e.msg));
  } catch (const std::exception& e) {
    return config_error(fmt::format("{}: {}", file, e.what()));
  }
  return entries;
}

} // namespace

std::string to_string(config_type t) {
  switch (t) {
    case config_type::integer:
      return "integer";
    case config_type::number:
      return "number";
    case config_type::boolean:
      return "boolean";
    case config_type::text:
      return "string";
    case config_type::duration:
      return "duration";
    case config_type::memory:
      return "memory size";
  }
  return "unknown";
}

caf::expected<configuration>
configuration::load(const std::optional<std::string>& file,
                    const std::vector<std::string>& dynamic) {
  configuration cfg;
  if (file) {
    auto entries = read_yaml(*file);
    if (!entries)
      return entries.error();
    for (auto& [key, node] : *entries) {
      auto where = fmt::format("{}:{}", *file, node.Mark().line + 1);
      if (!node.IsScalar())
        return config_error(
          fmt::format("{}: key '{}': expected a single value", where, key));
      if (auto problem = cfg.set(key, node.as<std::string>(), where);
          !problem.empty())
        return config_error(fmt::format("{}: {}", where, problem));
    }
  }
  for (auto& d : dynamic) {
    auto eq = d.find('=');
    if (eq == std::string::npos || eq == 0)
      return config_error(fmt::format("-D{}: expected -Dkey=value", d));
    auto where = "-D" + d;
    auto key = d.substr(0, eq);
    auto earlier = cfg.origins_.find(key);
    if (earlier != cfg.origins_.end() && from_command_line(earlier->second)
        && !detail::same_value(*find_key(key), cfg.values_[key],
                               d.substr(eq + 1)))
      return config_error(fmt::format("{} and {} set '{}' twice; give one",
                                      earlier->second, where, key));
    if (auto problem = cfg.set(d.substr(0, eq), d.substr(eq + 1), where);
        !problem.empty())
      return config_error(fmt::format("{}: {}", where, problem));
  }
  if (auto err = cfg.check_consistency())
    return err;
  return cfg;
}

caf::error configuration::check_consistency() const {
  // "5000 ms, -Dheartbeat.interval=5 s": a value and where it came from.
  auto value_of = [this](const config_key<std::chrono::milliseconds>& key) {
    auto from = origin(key);
    return fmt::format("{} ms, {}", get(key).count(),
                       from.empty() ? "default" : from);
  };
  // An empty state directory would put the cluster's files at the root of
  // the file system: never what was meant.
  if (is_set(keys::storage_dir) && get(keys::storage_dir).empty())
    return config_error(fmt::format("high-availability.storageDir ({}) is "
                                    "empty: give a directory, or leave the "
                                    "key out",
                                    origin(keys::storage_dir)));
  auto hb = get(keys::heartbeat_interval);
  auto timeout = get(keys::heartbeat_timeout);
  if (hb.count() <= 0 || timeout <= hb)
    return config_error(fmt::format("heartbeat.interval ({}) must be above 0 "
                                    "and below heartbeat.timeout ({})",
                                    value_of(keys::heartbeat_interval),
                                    value_of(keys::heartbeat_timeout)));
  auto initial = get(keys::registration_initial_timeout);
  if (initial.count() <= 0 || get(keys::registration_max_timeout) < initial)
    return config_error(fmt::format(
      "cluster.registration.initial-timeout ({}) must be above 0 and at most "
      "cluster.registration.max-timeout ({})",
      value_of(keys::registration_initial_timeout),
      value_of(keys::registration_max_timeout)));
  return caf::none;
}

std::string configuration::set(const std::string& key, const std::string& value,
                               const std::string& origin) {
  auto* k = find_key(key);
  if (k == nullptr)
    return fmt::format("unknown key '{}' (see docs/configuration.md)", key);
  if (auto problem = detail::type_problem(*k, value); !problem.empty())
    return fmt::format("key '{}': {}, got '{}'", key, problem, value);
  values_[key] = detail::trim(value);
  origins_[key] = origin;
  return {};
}

caf::error configuration::apply(const std::map<std::string, std::string>& values,
                                const std::string& origin) {
  for (auto& [key, value] : values)
    if (auto problem = set(key, value, origin); !problem.empty())
      return config_error(fmt::format("{}: {}", origin, problem));
  return check_consistency();
}

std::vector<config_entry> configuration::entries() const {
  std::vector<config_entry> out;
  for (auto& [key, value] : values_)
    out.push_back({key, value, origins_.at(key)});
  return out;
}

std::map<std::string, std::string>
configuration::set_with_prefix(const std::string& prefix) const {
  std::map<std::string, std::string> result;
  for (auto& [key, value] : values_)
    if (key.rfind(prefix, 0) == 0)
      result.emplace(key, value);
  return result;
}

std::string configuration::raw(std::string_view key,
                               std::string_view default_value) const {
  if (auto i = values_.find(std::string{key}); i != values_.end())
    return i->second;
  return std::string{default_value};
}

template <class T>
T configuration::get(const config_key<T>& key) const {
  // Set values were checked by set(); defaults by the config unit test.
  return detail::parse_value<T>(raw(key.name, key.default_value)).value_or(T{});
}

template int64_t configuration::get(const config_key<int64_t>&) const;
template double configuration::get(const config_key<double>&) const;
template bool configuration::get(const config_key<bool>&) const;
template std::string configuration::get(const config_key<std::string>&) const;
template std::chrono::milliseconds
configuration::get(const config_key<std::chrono::milliseconds>&) const;
template memory_size configuration::get(const config_key<memory_size>&) const;

caf::error check_job_config(const std::map<std::string, std::string>& keys) {
  for (auto& [key, value] : keys) {
    auto* k = find_key(key);
    if (k == nullptr || k->scope != config_scope::job)
      return config_error(fmt::format(
        "key '{}' cannot be set per job: it configures the cluster's "
        "processes (per job: restart-strategy.*, execution.checkpointing.*, "
        "execution.savepoint.*, state.checkpoints.num-retained, "
        "state.backend.type, slot.request.timeout, pipeline.*, "
        "jobmanager.scheduler, jobmanager.adaptive-scheduler.*, "
        "scheduler-mode, driver.*)",
        key));
  }
  return caf::none;
}

bool from_command_line(const std::string& origin) {
  return !origin.empty() && origin[0] == '-';
}

std::vector<config_entry>
effective_job_config(const configuration& cluster,
                     const std::map<std::string, std::string>& own,
                     const std::map<std::string, std::string>& origins) {
  std::map<std::string, config_entry> out;
  for (auto& k : config_keys())
    if (k.scope == config_scope::job && !k.default_value.empty())
      out[std::string{k.name}] = {std::string{k.name},
                                  std::string{k.default_value}, "default"};
  for (auto& e : cluster.entries())
    if (auto* k = find_key(e.key); k && k->scope == config_scope::job)
      out[e.key] = {e.key, e.value, "cluster: " + e.origin};
  for (auto& [key, value] : own) {
    auto i = origins.find(key);
    out[key] = {key, value, i == origins.end() ? "job config" : i->second};
  }
  std::vector<config_entry> result;
  for (auto& [key, e] : out)
    result.push_back(std::move(e));
  return result;
}

std::optional<std::string> default_config_file() {
  if (auto* dir = std::getenv("WEIR_CONF_DIR"); dir != nullptr && *dir != 0)
    return std::string{dir} + "/weir.yaml";
  std::string base;
  if (auto* xdg = std::getenv("XDG_CONFIG_HOME"); xdg != nullptr && *xdg != 0)
    base = xdg;
  else if (auto* home = std::getenv("HOME"); home != nullptr)
    base = std::string{home} + "/.config";
  auto path = base + "/weir/weir.yaml";
  std::error_code ec;
  if (!base.empty() && std::filesystem::exists(path, ec))
    return path;
  return std::nullopt;
}

} // namespace weir
