#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "config/keys.hpp"
#include "messages/errors.hpp"

using namespace weir;

namespace {

std::string write_temp(const std::string& content) {
  char name[] = "/tmp/weir-config-XXXXXX";
  int fd = mkstemp(name);
  REQUIRE(fd >= 0);
  std::ofstream{name} << content;
  return name;
}

std::string error_of(const std::optional<std::string>& file,
                     const std::vector<std::string>& dynamic) {
  auto cfg = configuration::load(file, dynamic);
  REQUIRE_FALSE(cfg);
  return describe(cfg.error());
}

} // namespace

TEST_CASE("defaults apply when nothing is set") {
  configuration cfg;
  CHECK(cfg.get(keys::jobmanager_port) == 6123);
  CHECK(cfg.get(keys::jobmanager_address) == "127.0.0.1");
  CHECK(cfg.get(keys::slot_request_timeout) == std::chrono::seconds(300));
  CHECK_FALSE(cfg.get(keys::evenly_spread_out_slots));
  CHECK_FALSE(cfg.is_set(keys::task_slots));
}

TEST_CASE("a YAML file in flat or nested form, overridden by -D") {
  auto file = write_temp("jobmanager.rpc.port: 7000\n"
                         "taskmanager:\n"
                         "  numberOfTaskSlots: 3\n"
                         "  memory.task.heap.size: 2g\n"
                         "slot.request.timeout: 1 min\n"
                         "cluster.evenly-spread-out-slots: true\n");
  auto cfg = configuration::load(file, {"jobmanager.rpc.port=7001",
                                        "taskmanager.cpu.cores=1.5"});
  REQUIRE(cfg);
  CHECK(cfg->get(keys::jobmanager_port) == 7001);
  CHECK(cfg->get(keys::task_slots) == 3);
  CHECK(cfg->is_set(keys::task_slots));
  CHECK(cfg->get(keys::taskmanager_heap).mb == 2048);
  CHECK(cfg->get(keys::slot_request_timeout) == std::chrono::minutes(1));
  CHECK(cfg->get(keys::evenly_spread_out_slots));
  CHECK(cfg->get(keys::taskmanager_cpu_cores) == 1.5);
  std::remove(file.c_str());
}

TEST_CASE("durations and memory sizes take Flink's units") {
  auto cfg = configuration::load(std::nullopt, {"slot.request.timeout=500 ms"});
  REQUIRE(cfg);
  CHECK(cfg->get(keys::slot_request_timeout) == std::chrono::milliseconds(500));
  cfg = configuration::load(std::nullopt, {"slot.request.timeout=2500"});
  CHECK(cfg->get(keys::slot_request_timeout) == std::chrono::milliseconds(2500));
  cfg = configuration::load(std::nullopt,
                            {"taskmanager.memory.task.heap.size=512m"});
  CHECK(cfg->get(keys::taskmanager_heap).mb == 512);
}

TEST_CASE("unknown keys and wrong types name the key and the source") {
  auto file = write_temp("taskmanager.numberOfTaskSlotz: 2\n");
  CHECK(error_of(file, {}) == file + ":1: unknown key "
                              "'taskmanager.numberOfTaskSlotz' (see "
                              "docs/configuration.md)");
  std::remove(file.c_str());
  file = write_temp("taskmanager.numberOfTaskSlots: two\n");
  CHECK(error_of(file, {}) == file + ":1: key 'taskmanager.numberOfTaskSlots': "
                              "expected an integer, got 'two'");
  std::remove(file.c_str());
  file = write_temp("heartbeat:\n  interval: 1 s\n  timeout: never\n");
  CHECK(error_of(file, {}) == file + ":3: key 'heartbeat.timeout': expected a "
                              "duration such as '500 ms' or '10 s', got "
                              "'never'");
  std::remove(file.c_str());
  CHECK(error_of(std::nullopt, {"slot.request.timeout=soon"})
        == "-Dslot.request.timeout=soon: key 'slot.request.timeout': expected a "
           "duration such as '500 ms' or '10 s', got 'soon'");
  CHECK(error_of(std::nullopt, {"cluster.evenly-spread-out-slots=yes"})
        == "-Dcluster.evenly-spread-out-slots=yes: key "
           "'cluster.evenly-spread-out-slots': expected true or false, got 'yes'");
  CHECK(error_of(std::nullopt, {"novalue"}) == "-Dnovalue: expected -Dkey=value");
  CHECK(error_of(std::string{"/nonexistent/weir.yaml"}, {})
        == "/nonexistent/weir.yaml: cannot read the configuration file: No such "
           "file or directory");
  file = write_temp("a: b: c\n");
  CHECK(error_of(file, {}) == file + ":1:5: illegal map value");
  std::remove(file.c_str());
}

TEST_CASE("each set value knows where it came from") {
  auto file = write_temp("# cluster\njobmanager.rpc.port: 7000\nheartbeat:\n"
                         "  timeout: 4 s\n");
  auto cfg = configuration::load(file, {"heartbeat.timeout=5 s"});
  REQUIRE(cfg);
  CHECK(cfg->origin(keys::jobmanager_port) == file + ":2");
  CHECK(cfg->origin(keys::heartbeat_timeout) == "-Dheartbeat.timeout=5 s");
  CHECK(cfg->origin(keys::task_slots).empty()); // the default
  CHECK_FALSE(cfg->apply({{"taskmanager.numberOfTaskSlots", "4"}}, "--slots 4"));
  CHECK(cfg->origin(keys::task_slots) == "--slots 4");
  std::remove(file.c_str());
}

TEST_CASE("parallelism.default: Flink's key of -p, in [1, 32768]") {
  CHECK(configuration{}.get(keys::parallelism_default) == 1);
  CHECK(configuration::load(std::nullopt, {"parallelism.default=3"})
          ->get(keys::parallelism_default)
        == 3);
  CHECK(error_of(std::nullopt, {"parallelism.default=0"})
        == "-Dparallelism.default=0: key 'parallelism.default': expected a "
           "value in [1, 32768], got '0'");
}

TEST_CASE("numbers outside a key's range name the key and the range") {
  CHECK(error_of(std::nullopt, {"taskmanager.numberOfTaskSlots=4294967297"})
        == "-Dtaskmanager.numberOfTaskSlots=4294967297: key "
           "'taskmanager.numberOfTaskSlots': expected a value in [1, 32768], "
           "got '4294967297'");
  CHECK(error_of(std::nullopt, {"taskmanager.numberOfTaskSlots=0"})
        == "-Dtaskmanager.numberOfTaskSlots=0: key "
           "'taskmanager.numberOfTaskSlots': expected a value in [1, 32768], "
           "got '0'");
  // Beyond int64 and double: out of range, not a crash or a wrapped value.
  CHECK(error_of(std::nullopt, {"jobmanager.rpc.port=99999999999999999999"})
        == "-Djobmanager.rpc.port=99999999999999999999: key "
           "'jobmanager.rpc.port': expected a value in [0, 65535], got "
           "'99999999999999999999'");
  CHECK(error_of(std::nullopt, {"heartbeat.timeout=99999999999999999999h"})
        == "-Dheartbeat.timeout=99999999999999999999h: key "
           "'heartbeat.timeout': expected a value in [1 ms, 8760 h], got "
           "'99999999999999999999h'");
  auto file = write_temp("taskmanager.memory.task.heap.size: 1" +
                         std::string(400, '0') + "g\n");
  CHECK(error_of(file, {}).find("key 'taskmanager.memory.task.heap.size': "
                                "expected a value in [0, 16384g]")
        != std::string::npos);
  std::remove(file.c_str());
  CHECK(error_of(std::nullopt,
                 {"restart-strategy.exponential-delay.jitter-factor=1.5"})
        == "-Drestart-strategy.exponential-delay.jitter-factor=1.5: key "
           "'restart-strategy.exponential-delay.jitter-factor': expected a "
           "value in [0, 1], got '1.5'");
  // The bounds themselves are valid.
  CHECK(configuration::load(std::nullopt, {"heartbeat.timeout=8760 h",
                                           "taskmanager.numberOfTaskSlots=32768",
                                           "jobmanager.rpc.port=0"}));
}

TEST_CASE("every numeric key has a range that holds its default") {
  for (auto& k : config_keys()) {
    auto numeric = k.type != config_type::text
                   && k.type != config_type::boolean;
    CHECK_MESSAGE(numeric == !k.range.min.empty(), k.name);
    CHECK_MESSAGE(numeric == !k.range.max.empty(), k.name);
  }
}

namespace {

/// The table rows ("| `key` | ...") of a section of docs/configuration.md.
std::vector<std::string> docs_rows(const std::string& section) {
  auto* root = std::getenv("WEIR_SOURCE_ROOT");
  REQUIRE(root != nullptr);
  std::ifstream in{std::string{root} + "/docs/configuration.md"};
  REQUIRE(in.good());
  std::vector<std::string> rows;
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.rfind("## ", 0) == 0)
      inside = line == section;
    if (inside && line.rfind("| `", 0) == 0)
      rows.push_back(line);
  }
  return rows;
}

/// The rows of docs/configuration.md's key table: name -> (type, default).
std::map<std::string, std::pair<std::string, std::string>> documented_keys() {
  std::map<std::string, std::pair<std::string, std::string>> rows;
  for (auto& line : docs_rows("## Keys")) {
    std::vector<std::string> cells;
    std::stringstream row{line.substr(1)};
    for (std::string cell; std::getline(row, cell, '|');) {
      auto first = cell.find_first_not_of(' ');
      auto last = cell.find_last_not_of(' ');
      cells.push_back(first == std::string::npos
                        ? std::string{}
                        : cell.substr(first, last - first + 1));
    }
    REQUIRE(cells.size() >= 3);
    auto name = cells[0].substr(1, cells[0].size() - 2); // no backquotes
    rows[name] = {cells[1], cells[2]};
  }
  return rows;
}

} // namespace

TEST_CASE("docs/configuration.md lists every key with its type and default") {
  auto docs = documented_keys();
  for (auto& k : config_keys()) {
    auto name = std::string{k.name};
    auto i = docs.find(name);
    if (i == docs.end()) {
      FAIL_CHECK("missing from docs/configuration.md: " << name);
      continue;
    }
    auto& [type, default_value] = i->second;
    CHECK_MESSAGE(type == to_string(k.type), name << ": the docs say " << type);
    // The docs may say more after the default ("0 (unknown)"); a key
    // without a default (an empty one) may describe what happens instead.
    auto def = std::string{k.default_value};
    CHECK_MESSAGE((def.empty() || default_value == def
                   || default_value.rfind(def + " (", 0) == 0),
                  name << ": default '" << def << "', the docs say '"
                       << default_value << "'");
    docs.erase(i);
  }
  for (auto& [name, row] : docs)
    CHECK_MESSAGE(name.rfind("weir.fault.", 0) == 0,
                  "docs/configuration.md lists an unknown key: " << name);
}

namespace {

/// The rows of docs/configuration.md's range table: name -> "[min, max]".
std::map<std::string, std::string> documented_ranges() {
  std::map<std::string, std::string> rows;
  for (auto& line : docs_rows("## Ranges")) {
    auto name = line.substr(3, line.find('`', 3) - 3);
    auto range = line.substr(line.find(" | ") + 3);
    rows[name] = range.substr(0, range.find(" |"));
  }
  return rows;
}

} // namespace

TEST_CASE("docs/configuration.md lists every numeric key's range") {
  auto docs = documented_ranges();
  for (auto& k : config_keys()) {
    if (k.range.min.empty())
      continue;
    auto name = std::string{k.name};
    auto expected = "[" + std::string{k.range.min} + ", "
                    + std::string{k.range.max} + "]";
    CHECK_MESSAGE(docs[name] == expected,
                  name << ": the docs say '" << docs[name] << "'");
  }
}

TEST_CASE("every default is a valid value of its key's type") {
  for (auto& k : config_keys()) {
    if (k.default_value.empty())
      continue;
    auto d = "-D" + std::string{k.name} + "=" + std::string{k.default_value};
    auto cfg = configuration::load(std::nullopt, {d.substr(2)});
    CHECK_MESSAGE(cfg, d << ": " << (cfg ? "" : describe(cfg.error())));
  }
}

TEST_CASE("typed keys read the value or the default") {
  configuration cfg;
  CHECK(cfg.get(keys::jobmanager_port) == 6123);
  CHECK(cfg.get(keys::heartbeat_timeout) == std::chrono::seconds(3));
  CHECK(cfg.get(keys::state_backend) == "hashmap");
  CHECK(cfg.get(keys::storage_dir).empty());
  CHECK_FALSE(cfg.get_if_set(keys::task_slots));
  auto set = configuration::load(
    std::nullopt, {"taskmanager.memory.managed.size=1g",
                   "restart-strategy.exponential-delay.jitter-factor=0.5",
                   "taskmanager.numberOfTaskSlots=4"});
  REQUIRE(set);
  CHECK(set->get(keys::taskmanager_managed).mb == 1024);
  CHECK(set->get(keys::exponential_jitter_factor) == 0.5);
  CHECK(set->get_if_set(keys::task_slots) == 4);
  CHECK(set->is_set(keys::task_slots));
}

TEST_CASE("configuration errors carry errc::invalid_config") {
  auto bad = configuration::load(std::nullopt, {"heartbeat.timeout=soon"});
  REQUIRE_FALSE(bad);
  CHECK(bad.error() == make_error(errc::invalid_config));
  bad = configuration::load(std::nullopt, {"heartbeat.interval=5 s"});
  REQUIRE_FALSE(bad);
  CHECK(bad.error() == make_error(errc::invalid_config));
  CHECK(describe(bad.error())
        == "heartbeat.interval (5000 ms, -Dheartbeat.interval=5 s) must be "
           "above 0 and below heartbeat.timeout (3000 ms, default)");
  configuration cfg;
  CHECK(cfg.apply({{"state.backend.type", "disk"}}, "job config")
        == make_error(errc::invalid_config));
}

TEST_CASE("one key given twice by -D with two values is refused") {
  CHECK(error_of(std::nullopt, {"slot.request.timeout=2 s",
                                "slot.request.timeout=3 s"})
        == "-Dslot.request.timeout=2 s and -Dslot.request.timeout=3 s set "
           "'slot.request.timeout' twice; give one");
  auto same = configuration::load(std::nullopt, {"slot.request.timeout=2 s",
                                                 "slot.request.timeout=2000"});
  REQUIRE(same);
  CHECK(same->get(keys::slot_request_timeout) == std::chrono::seconds(2));
  // A file's value is the base that -D overrides (Flink's precedence).
  auto file = write_temp("slot.request.timeout: 5 s\n");
  auto over = configuration::load(file, {"slot.request.timeout=2 s"});
  std::remove(file.c_str());
  REQUIRE(over);
  CHECK(over->get(keys::slot_request_timeout) == std::chrono::seconds(2));
}

TEST_CASE("a job's effective settings: its own, the cluster's, the default") {
  auto cluster = configuration::load(
    std::nullopt, {"restart-strategy.type=none", "heartbeat.timeout=9 s"});
  REQUIRE(cluster);
  auto view = effective_job_config(
    *cluster, {{"execution.checkpointing.interval", "2 s"}},
    {{"execution.checkpointing.interval", "-Dexecution.checkpointing.interval=2 s"}});
  std::map<std::string, std::pair<std::string, std::string>> by_key;
  for (auto& e : view)
    by_key[e.key] = {e.value, e.origin};
  CHECK(by_key["execution.checkpointing.interval"]
        == std::pair<std::string, std::string>{
          "2 s", "-Dexecution.checkpointing.interval=2 s"});
  CHECK(by_key["restart-strategy.type"]
        == std::pair<std::string, std::string>{
          "none", "cluster: -Drestart-strategy.type=none"});
  CHECK(by_key["slot.request.timeout"]
        == std::pair<std::string, std::string>{"300 s", "default"});
  CHECK(by_key.count("heartbeat.timeout") == 0); // not a job's key
  CHECK(by_key.count("execution.savepoint.path") == 0); // no value
}

TEST_CASE("a job sets only keys of job scope") {
  CHECK_FALSE(check_job_config({{"restart-strategy.type", "fixed-delay"},
                                {"execution.checkpointing.interval", "1 s"},
                                {"state.backend.type", "rocksdb"},
                                {"driver.cpu-cores", "1"}}));
  auto err = check_job_config({{"execution.checkpointing.dir", "/tmp/x"}});
  CHECK(err == make_error(errc::invalid_config));
  CHECK(describe(err).rfind("key 'execution.checkpointing.dir' cannot be set "
                            "per job",
                            0)
        == 0);
}

TEST_CASE("the job-scope keys: restart-strategy.*, execution.checkpointing.* "
          "but its dir, execution.savepoint.*, state.*, driver.*, weir.fault.*, "
          "slot.request.timeout, pipeline.*, the schedulers'") {
  auto starts = [](std::string_view s, std::string_view prefix) {
    return s.substr(0, prefix.size()) == prefix;
  };
  for (auto& k : config_keys()) {
    auto per_job = starts(k.name, keys::restart_strategy_prefix)
                   || starts(k.name, "weir.fault.")
                   || (starts(k.name, "execution.checkpointing.")
                       && k.name != "execution.checkpointing.dir")
                   || k.name == "state.checkpoints.num-retained"
                   || k.name == "state.backend.type"
                   || starts(k.name, "driver.")
                   || k.name == "slot.request.timeout"
                   || starts(k.name, "pipeline.")
                   || k.name == "jobmanager.scheduler"
                   || k.name == "scheduler-mode"
                   || starts(k.name, "jobmanager.adaptive-scheduler.")
                   || starts(k.name, "execution.savepoint.");
    CHECK_MESSAGE(per_job == (k.scope == config_scope::job), k.name);
  }
}
