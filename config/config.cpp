#include "config/config.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include "messages/errors.hpp"

namespace weir {

namespace {

const config_key* find_key(const std::string& name) {
  for (auto& k : config_keys())
    if (k.name == name)
      return &k;
  return nullptr;
}

std::string trim(std::string s) {
  auto first = s.find_first_not_of(" \t");
  auto last = s.find_last_not_of(" \t");
  return first == std::string::npos ? std::string{}
                                    : s.substr(first, last - first + 1);
}

std::string lower(std::string s) {
  for (auto& c : s)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

/// Splits "500 ms" into 500 and "ms"; nothing if the number part is bad.
std::optional<std::pair<double, std::string>> number_and_unit(const std::string& s) {
  auto t = trim(s);
  size_t i = 0;
  while (i < t.size() && (std::isdigit(static_cast<unsigned char>(t[i])) || t[i] == '.'))
    ++i;
  if (i == 0)
    return std::nullopt;
  try {
    size_t used = 0;
    auto v = std::stod(t.substr(0, i), &used);
    if (used != i)
      return std::nullopt;
    return std::make_pair(v, lower(trim(t.substr(i))));
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<int64_t> parse_integer(const std::string& s) {
  auto t = trim(s);
  int64_t v = 0;
  auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (ec != std::errc{} || end != t.data() + t.size() || t.empty())
    return std::nullopt;
  return v;
}

std::optional<int64_t> parse_duration_ms(const std::string& s) {
  auto nu = number_and_unit(s);
  if (!nu)
    return std::nullopt;
  auto [v, unit] = *nu;
  double factor = 0;
  if (unit.empty() || unit == "ms" || unit == "milli" || unit == "millis")
    factor = 1;
  else if (unit == "s" || unit == "sec" || unit == "secs" || unit == "second"
           || unit == "seconds")
    factor = 1000;
  else if (unit == "min" || unit == "m" || unit == "minute" || unit == "minutes")
    factor = 60000;
  else if (unit == "h" || unit == "hour" || unit == "hours")
    factor = 3600000;
  else
    return std::nullopt;
  return static_cast<int64_t>(v * factor);
}

std::optional<int64_t> parse_memory_mb(const std::string& s) {
  auto nu = number_and_unit(s);
  if (!nu)
    return std::nullopt;
  auto [v, unit] = *nu;
  double mb = 0;
  if (unit.empty() || unit == "b" || unit == "bytes")
    mb = v / (1024 * 1024);
  else if (unit == "k" || unit == "kb" || unit == "kibibytes")
    mb = v / 1024;
  else if (unit == "m" || unit == "mb" || unit == "mebibytes")
    mb = v;
  else if (unit == "g" || unit == "gb" || unit == "gibibytes")
    mb = v * 1024;
  else
    return std::nullopt;
  return static_cast<int64_t>(mb);
}

std::string type_problem(const config_key& k, const std::string& value) {
  switch (k.type) {
    case config_type::integer:
      if (!parse_integer(value))
        return "expected an integer";
      break;
    case config_type::number:
      if (!number_and_unit(value) || !number_and_unit(value)->second.empty())
        return "expected a number";
      break;
    case config_type::boolean:
      if (lower(trim(value)) != "true" && lower(trim(value)) != "false")
        return "expected true or false";
      break;
    case config_type::duration:
      if (!parse_duration_ms(value))
        return "expected a duration such as '500 ms' or '10 s'";
      break;
    case config_type::memory:
      if (!parse_memory_mb(value))
        return "expected a memory size such as '512m' or '1g'";
      break;
    case config_type::text:
      if (!k.choices.empty()
          && std::find(k.choices.begin(), k.choices.end(), trim(value))
               == k.choices.end())
        return fmt::format("expected one of {}",
                           fmt::join(k.choices, ", "));
      break;
  }
  return {};
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

const std::vector<config_key>& config_keys() {
  using t = config_type;
  static const std::vector<config_key> keys{
    {"cluster.evenly-spread-out-slots", t::boolean, "false",
     "Take slots from the TaskExecutor with the most free slots instead of "
     "filling one TaskExecutor after the other."},
    {"high-availability.storageDir", t::text, "",
     "RocksDB directory of job graphs and results. `weir jobmanager`: "
     "default $XDG_STATE_HOME/weir or ~/.local/state/weir; `weir run`: "
     "in memory unless set."},
    {"cluster.registration.initial-timeout", t::duration, "100 ms",
     "First pause of a worker between attempts to reach the master; it "
     "doubles after every failed attempt."},
    {"cluster.registration.max-timeout", t::duration, "10 s",
     "Longest pause of a worker between attempts to reach the master."},
    {"execution.checkpointing.dir", t::text, "",
     "Directory of completed checkpoints' data (Flink's "
     "state.checkpoints.dir); default <state directory>/checkpoints, none "
     "(memory only) for `weir run` without --state-dir."},
    {"driver.cpu-cores", t::number, "0",
     "Driver mode: CPU cores of the driver's slot (-Dc/--drivercpus). Per "
     "job."},
    {"driver.heap-memory", t::memory, "0",
     "Driver mode: heap memory of the driver's slot (-Dhm/--driverheapmemory). "
     "Per job."},
    {"driver.direct-memory", t::memory, "0",
     "Driver mode: direct memory of the driver's slot "
     "(-Ddm/--driverdirectmemory). Per job."},
    {"driver.native-memory", t::memory, "0",
     "Driver mode: native memory of the driver's slot "
     "(-Dnm/--drivernativememory). Per job."},
    {"execution.checkpointing.incremental", t::boolean, "false",
     "RocksDB state: checkpoints write only the files the previous one did "
     "not (shared files under <dir>/<job id>/shared). Per job."},
    {"execution.checkpointing.interval", t::duration, "0",
     "How often the JobMaster triggers a checkpoint (0: never; Flink's "
     "default is off too). Per job or cluster-wide."},
    {"execution.checkpointing.timeout", t::duration, "10 min",
     "A checkpoint not acknowledged by every subtask within this time is "
     "abandoned."},
    {"execution.checkpointing.max-concurrent-checkpoints", t::integer, "1",
     "Checkpoints that may be pending at once."},
    {"execution.checkpointing.min-pause", t::duration, "0",
     "Least time between the end of one checkpoint and the start of the "
     "next."},
    {"execution.checkpointing.savepoint-dir", t::text, "",
     "Default directory of savepoints (`weir savepoint`, `weir stop`)."},
    {"execution.savepoint.path", t::text, "",
     "A savepoint the job starts from (`weir run -s PATH`). Per job."},
    {"execution.savepoint.ignore-unclaimed-state", t::boolean, "false",
     "Start from a savepoint even if it holds state of vertices the job "
     "does not have (`weir run -n`). Per job."},
    {"heartbeat.interval", t::duration, "200 ms",
     "How often connected processes exchange heartbeats."},
    {"heartbeat.rpc-failure-threshold", t::integer, "2",
     "Heartbeat requests that may fail in a row (the peer answered that it "
     "cannot be reached) before the peer is declared lost."},
    {"heartbeat.timeout", t::duration, "1 s",
     "A peer silent this long is declared lost (its TaskExecutor, its "
     "subtasks)."},
    {"high-availability.cluster-id", t::text, "default",
     "Name of the cluster: processes and clients of different clusters (or "
     "weir versions) refuse each other's connections."},
    {"jobmanager.supervision.max-restarts", t::integer, "3",
     "Crashes of JobMasters (counted by the Dispatcher) or of the Dispatcher "
     "and ResourceManager (counted by the jobmanager's supervisor) that are "
     "restarted within jobmanager.supervision.within; one more and the "
     "supervisor gives up (the jobmanager exits with code 4)."},
    {"jobmanager.supervision.within", t::duration, "1 min",
     "The window of jobmanager.supervision.max-restarts."},
    {"jobmanager.rpc.address", t::text, "127.0.0.1",
     "Address the jobmanager listens on, and that workers and clients "
     "connect to when no -m is given."},
    {"jobmanager.rpc.port", t::integer, "6123",
     "Port of the jobmanager (0: any free port, printed in its log)."},
    {"minicluster.number-of-taskmanagers", t::integer, "1",
     "TaskExecutors of the embedded cluster of `weir run`."},
    {"resourcemanager.taskmanager-timeout", t::duration, "30 s",
     "Driver mode (a CLI-created cluster): a worker the ResourceManager "
     "started and that has held no slot this long is stopped."},
    {"resourcemanager.start-worker.max-failure-rate", t::number, "10",
     "Driver mode: worker starts that may fail per minute; beyond that no "
     "worker is started until the minute has passed."},
    {"restart-strategy.type", t::text, "none",
     "How a job reacts to a failure: none, fixed-delay, exponential-delay or "
     "failure-rate (Flink's names).",
     {"none", "off", "disable", "fixed-delay", "fixeddelay",
      "exponential-delay", "exponentialdelay", "failure-rate", "failurerate"}},
    {"restart-strategy.fixed-delay.attempts", t::integer, "1",
     "fixed-delay: restarts before the job fails."},
    {"restart-strategy.fixed-delay.delay", t::duration, "1 s",
     "fixed-delay: pause before each restart."},
    {"restart-strategy.exponential-delay.initial-backoff", t::duration, "1 s",
     "exponential-delay: first pause."},
    {"restart-strategy.exponential-delay.max-backoff", t::duration, "1 min",
     "exponential-delay: longest pause."},
    {"restart-strategy.exponential-delay.backoff-multiplier", t::number, "2.0",
     "exponential-delay: factor between consecutive pauses."},
    {"restart-strategy.exponential-delay.jitter-factor", t::number, "0.1",
     "exponential-delay: random spread of each pause (0.1 = +-10 %)."},
    {"restart-strategy.exponential-delay.reset-backoff-threshold", t::duration,
     "1 h", "exponential-delay: a failure-free period after which the pause "
     "starts over."},
    {"restart-strategy.failure-rate.max-failures-per-interval", t::integer, "1",
     "failure-rate: failures tolerated per interval."},
    {"restart-strategy.failure-rate.failure-rate-interval", t::duration,
     "1 min", "failure-rate: the interval."},
    {"restart-strategy.failure-rate.delay", t::duration, "1 s",
     "failure-rate: pause before each restart."},
    {"slot.request.timeout", t::duration, "300 s",
     "How long a job waits for all of its slots before it fails."},
    {"state.checkpoints.num-retained", t::integer, "1",
     "Completed checkpoints kept; a failover restores the newest."},
    {"state.backend.type", t::text, "hashmap",
     "Where keyed state lives: hashmap (objects on the heap) or rocksdb (an "
     "embedded RocksDB per operator instance, on local disk). Per job.",
     {"hashmap", "rocksdb"}},
    {"taskmanager.state.local.root-dirs", t::text, "",
     "Directory under which a worker keeps its RocksDB state (one "
     "subdirectory per worker, removed when it exits); default the "
     "system's temporary directory ($TMPDIR or /tmp)."},
    {"taskmanager.cpu.cores", t::number, "0",
     "CPU cores of a worker, split evenly over its slots (0: unknown)."},
    {"taskmanager.memory.task.off-heap.size", t::memory, "0",
     "Direct (off-heap) memory of a worker's tasks, split evenly over its "
     "slots (0: unknown)."},
    {"taskmanager.memory.managed.size", t::memory, "0",
     "Native (managed) memory of a worker, split evenly over its slots (0: "
     "unknown)."},
    {"taskmanager.memory.task.heap.size", t::memory, "0",
     "Task heap memory of a worker, split evenly over its slots (0: unknown)."},
    {"taskmanager.numberOfTaskSlots", t::integer, "1",
     "Slots per TaskExecutor (`weir run`: default enough for the job)."},
    {"taskmanager.resource-id", t::text, "",
     "Name of a worker; default HOST-PID."},
#ifdef WEIR_FAULT_INJECTION
    {"weir.fault.jobmaster-crashes", t::integer, "0",
     "Test hook (builds with -Dfault_injection=true, the default): the "
     "first N JobMasters of the job crash once the job is deployed. Per "
     "job."},
#endif
  };
  return keys;
}

caf::expected<configuration>
configuration::load(const std::optional<std::string>& file,
                    const std::vector<std::string>& dynamic) {
  configuration cfg;
  if (file) {
    std::vector<std::pair<std::string, YAML::Node>> entries;
    try {
      auto root = YAML::LoadFile(*file);
      if (root.IsDefined() && !root.IsNull()) {
        if (!root.IsMap())
          return make_error(errc::invalid_job,
                            fmt::format("{}: expected a map of keys to values",
                                        *file));
        flatten(root, "", entries);
      }
    } catch (const YAML::BadFile&) {
      return make_error(errc::invalid_job,
                        fmt::format("{}: cannot read the configuration file",
                                    *file));
    } catch (const YAML::Exception& e) {
      return make_error(errc::invalid_job,
                        fmt::format("{}:{}:{}: {}", *file, e.mark.line + 1,
                                    e.mark.column + 1, e.msg));
    }
    for (auto& [key, node] : entries) {
      if (!node.IsScalar())
        return make_error(errc::invalid_job,
                          fmt::format("{}: key '{}': expected a single value",
                                      *file, key));
      if (auto problem = cfg.set(key, node.as<std::string>()); !problem.empty())
        return make_error(errc::invalid_job,
                          fmt::format("{}: {}", *file, problem));
    }
  }
  auto cross_check = [&]() -> caf::error {
    auto hb = cfg.duration("heartbeat.interval");
    auto timeout = cfg.duration("heartbeat.timeout");
    if (hb.count() <= 0 || timeout <= hb)
      return make_error(errc::invalid_job,
                        fmt::format("heartbeat.interval ({} ms) must be above "
                                    "0 and below heartbeat.timeout ({} ms)",
                                    hb.count(), timeout.count()));
    if (cfg.duration("cluster.registration.initial-timeout").count() <= 0
        || cfg.duration("cluster.registration.max-timeout")
             < cfg.duration("cluster.registration.initial-timeout"))
      return make_error(errc::invalid_job,
                        "cluster.registration.initial-timeout must be above 0 "
                        "and at most cluster.registration.max-timeout");
    return caf::none;
  };
  for (auto& d : dynamic) {
    auto eq = d.find('=');
    if (eq == std::string::npos || eq == 0)
      return make_error(errc::invalid_job,
                        fmt::format("-D{}: expected -Dkey=value", d));
    if (auto problem = cfg.set(d.substr(0, eq), d.substr(eq + 1));
        !problem.empty())
      return make_error(errc::invalid_job, fmt::format("-D{}: {}", d, problem));
  }
  if (auto err = cross_check())
    return err;
  return cfg;
}

std::string configuration::set(const std::string& key, const std::string& value) {
  auto* k = find_key(key);
  if (k == nullptr)
    return fmt::format("unknown key '{}' (see docs/configuration.md)", key);
  if (auto problem = type_problem(*k, value); !problem.empty())
    return fmt::format("key '{}': {}, got '{}'", key, problem, value);
  values_[key] = trim(value);
  return {};
}

caf::error configuration::apply(const std::map<std::string, std::string>& values,
                                const std::string& origin) {
  for (auto& [key, value] : values)
    if (auto problem = set(key, value); !problem.empty())
      return make_error(errc::invalid_job, fmt::format("{}: {}", origin, problem));
  return caf::none;
}

std::map<std::string, std::string>
configuration::set_with_prefix(const std::string& prefix) const {
  std::map<std::string, std::string> result;
  for (auto& [key, value] : values_)
    if (key.rfind(prefix, 0) == 0)
      result.emplace(key, value);
  return result;
}

std::string check_job_config_keys(const std::map<std::string, std::string>& keys) {
  for (auto& [key, value] : keys)
    if (key.rfind("restart-strategy.", 0) != 0
        && key.rfind("weir.fault.", 0) != 0
        && (key.rfind("execution.checkpointing.", 0) != 0
            || key == "execution.checkpointing.dir")
        && key != "state.checkpoints.num-retained"
        && key != "state.backend.type"
        && key.rfind("driver.", 0) != 0
        && key != "execution.savepoint.path"
        && key != "execution.savepoint.ignore-unclaimed-state")
      return fmt::format("key '{}' cannot be set per job (only "
                         "restart-strategy.*, execution.checkpointing.*, "
                         "execution.savepoint.*, "
                         "state.checkpoints.num-retained, state.backend.type)",
                         key);
  return {};
}

bool configuration::is_set(const std::string& key) const {
  return values_.count(key) > 0;
}

const std::string& configuration::raw(const std::string& key) const {
  if (auto i = values_.find(key); i != values_.end())
    return i->second;
  auto* k = find_key(key);
  if (k == nullptr)
    throw std::logic_error("unknown configuration key " + key);
  return k->default_value;
}

int64_t configuration::integer(const std::string& key) const {
  return parse_integer(raw(key)).value_or(0);
}

double configuration::number(const std::string& key) const {
  auto nu = number_and_unit(raw(key));
  return nu ? nu->first : 0.0;
}

bool configuration::boolean(const std::string& key) const {
  return lower(trim(raw(key))) == "true";
}

std::string configuration::text(const std::string& key) const {
  return raw(key);
}

std::chrono::milliseconds configuration::duration(const std::string& key) const {
  return std::chrono::milliseconds{parse_duration_ms(raw(key)).value_or(0)};
}

int64_t configuration::memory_mb(const std::string& key) const {
  return parse_memory_mb(raw(key)).value_or(0);
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
