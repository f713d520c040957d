#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "config/config.hpp"
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
  CHECK(cfg.integer("jobmanager.rpc.port") == 6123);
  CHECK(cfg.text("jobmanager.rpc.address") == "127.0.0.1");
  CHECK(cfg.duration("slot.request.timeout") == std::chrono::seconds(300));
  CHECK_FALSE(cfg.boolean("cluster.evenly-spread-out-slots"));
  CHECK_FALSE(cfg.is_set("taskmanager.numberOfTaskSlots"));
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
  CHECK(cfg->integer("jobmanager.rpc.port") == 7001);
  CHECK(cfg->integer("taskmanager.numberOfTaskSlots") == 3);
  CHECK(cfg->is_set("taskmanager.numberOfTaskSlots"));
  CHECK(cfg->memory_mb("taskmanager.memory.task.heap.size") == 2048);
  CHECK(cfg->duration("slot.request.timeout") == std::chrono::minutes(1));
  CHECK(cfg->boolean("cluster.evenly-spread-out-slots"));
  CHECK(cfg->number("taskmanager.cpu.cores") == 1.5);
  std::remove(file.c_str());
}

TEST_CASE("durations and memory sizes take Flink's units") {
  auto cfg = configuration::load(std::nullopt, {"slot.request.timeout=500 ms"});
  REQUIRE(cfg);
  CHECK(cfg->duration("slot.request.timeout") == std::chrono::milliseconds(500));
  cfg = configuration::load(std::nullopt, {"slot.request.timeout=2500"});
  CHECK(cfg->duration("slot.request.timeout") == std::chrono::milliseconds(2500));
  cfg = configuration::load(std::nullopt,
                            {"taskmanager.memory.task.heap.size=512m"});
  CHECK(cfg->memory_mb("taskmanager.memory.task.heap.size") == 512);
}

TEST_CASE("unknown keys and wrong types name the key and the source") {
  auto file = write_temp("taskmanager.numberOfTaskSlotz: 2\n");
  CHECK(error_of(file, {}) == file + ": unknown key 'taskmanager.numberOfTaskSlotz' "
                              "(see docs/configuration.md)");
  std::remove(file.c_str());
  file = write_temp("taskmanager.numberOfTaskSlots: two\n");
  CHECK(error_of(file, {}) == file + ": key 'taskmanager.numberOfTaskSlots': "
                              "expected an integer, got 'two'");
  std::remove(file.c_str());
  CHECK(error_of(std::nullopt, {"slot.request.timeout=soon"})
        == "-Dslot.request.timeout=soon: key 'slot.request.timeout': expected a "
           "duration such as '500 ms' or '10 s', got 'soon'");
  CHECK(error_of(std::nullopt, {"cluster.evenly-spread-out-slots=yes"})
        == "-Dcluster.evenly-spread-out-slots=yes: key "
           "'cluster.evenly-spread-out-slots': expected true or false, got 'yes'");
  CHECK(error_of(std::nullopt, {"novalue"}) == "-Dnovalue: expected -Dkey=value");
  CHECK(error_of(std::string{"/nonexistent/weir.yaml"}, {})
        == "/nonexistent/weir.yaml: cannot read the configuration file");
  file = write_temp("a: b: c\n");
  CHECK(error_of(file, {}) == file + ":1:5: illegal map value");
  std::remove(file.c_str());
}

TEST_CASE("docs/configuration.md lists every key with its type and default") {
  auto* root = std::getenv("WEIR_SOURCE_ROOT");
  REQUIRE(root != nullptr);
  std::ifstream in{std::string{root} + "/docs/configuration.md"};
  REQUIRE(in.good());
  std::stringstream ss;
  ss << in.rdbuf();
  auto docs = ss.str();
  for (auto& k : config_keys()) {
    auto row = "| `" + k.name + "` | " + to_string(k.type) + " | ";
    CHECK_MESSAGE(docs.find(row) != std::string::npos,
                  "missing from docs/configuration.md: " << row);
  }
}
