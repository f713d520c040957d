// The CLI's option tables and the cluster's options as the configuration
// sets them.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "cli/config_flags.hpp"
#include "cli/local_recovery.hpp"
#include "cli/taskmanager_flags.hpp"
#include "cluster/mini_cluster.hpp"
#include "cluster/processes.hpp"
#include "config/keys.hpp"
#include "messages/errors.hpp"

using namespace weir;
using namespace std::chrono_literals;

namespace {

configuration config_of(const std::vector<std::string>& dynamic) {
  auto cfg = configuration::load(std::nullopt, dynamic);
  REQUIRE(cfg);
  return std::move(*cfg);
}

cxxopts::ParseResult parse_taskmanager(const std::vector<std::string>& args) {
  auto opts = cli::taskmanager_flags();
  cli::add_config_flags(opts);
  std::vector<const char*> argv{"weir"};
  for (auto& a : args)
    argv.push_back(a.c_str());
  return opts.parse(static_cast<int>(argv.size()), argv.data());
}

} // namespace

TEST_CASE("a started worker's arguments read back through the taskmanager's "
          "flags") {
  worker_request w{"127.0.0.1:6123", resource_id{"w-1"}, 2,
                   resource_profile{0.5, 64, 0, 32}};
  auto args = cli::taskmanager_arguments(w, "/logs",
                                         {"--config", "/etc/weir.yaml",
                                          "-Dheartbeat.timeout=2 s"});
  REQUIRE(args.front() == "taskmanager");
  auto res = parse_taskmanager({args.begin() + 1, args.end()});
  CHECK(res["jobmanager"].as<std::string>() == "127.0.0.1:6123");
  CHECK(res["id"].as<std::string>() == "w-1");
  CHECK(res["slots"].as<int32_t>() == 2);
  CHECK(res["cpu-cores"].as<double>() == 1.0);
  CHECK(res["memory"].as<int64_t>() == 128);
  CHECK(res.count("direct-memory") == 0);
  CHECK(res["native-memory"].as<int64_t>() == 64);
  CHECK(res["log"].as<std::string>() == "/logs/w-1.log");
  CHECK(res["config"].as<std::string>() == "/etc/weir.yaml");
  CHECK(cli::config_args(res)
        == std::vector<std::string>{"--config", "/etc/weir.yaml",
                                    "-Dheartbeat.timeout=2 s"});
}

TEST_CASE("flags win over configuration keys") {
  auto cfg = config_of({"taskmanager.numberOfTaskSlots=3",
                        "taskmanager.resource-id=from-config"});
  auto res = parse_taskmanager({"--slots", "5"});
  cli::flag_overrides<int32_t>(cfg, res, "slots", keys::task_slots);
  cli::flag_overrides<std::string>(cfg, res, "id", keys::resource_id);
  auto tm = taskmanager_options::from(cfg);
  CHECK(tm.slots == 5);
  CHECK(tm.id == "from-config");
}

TEST_CASE("a flag outside its key's range names the flag, the key and the "
          "range") {
  auto cfg = config_of({});
  auto res = parse_taskmanager({"--slots", "0", "--memory", "99999999"});
  auto err = cli::flag_overrides<int32_t>(cfg, res, "slots", keys::task_slots);
  CHECK(describe(err) == "--slots: key 'taskmanager.numberOfTaskSlots': "
                         "expected a value in [1, 32768], got '0'");
  err = cli::flag_overrides<int64_t>(cfg, res, "memory", keys::taskmanager_heap,
                                     "m");
  CHECK(describe(err) == "--memory: key 'taskmanager.memory.task.heap.size': "
                         "expected a value in [0, 16384g], got '99999999m'");
  CHECK(taskmanager_options::from(cfg).slots == 1);
}

TEST_CASE("a taskmanager's options from the configuration") {
  auto tm = taskmanager_options::from(
    config_of({"taskmanager.numberOfTaskSlots=4", "taskmanager.cpu.cores=2",
               "taskmanager.memory.task.heap.size=1g",
               "cluster.registration.max-timeout=5 s",
               "heartbeat.interval=100 ms"}));
  CHECK(tm.slots == 4);
  CHECK(tm.resources.heap_mb == 1024);
  CHECK(tm.max_backoff == 5s);
  CHECK(tm.initial_backoff == 100ms);
  CHECK(tm.heartbeat.interval == 100ms);
  CHECK_FALSE(tm.id.empty()); // HOST-PID
  auto slot = per_slot(tm.resources, tm.slots);
  CHECK(slot.cpu_cores == 0.5);
  CHECK(slot.heap_mb == 256);
}

TEST_CASE("a jobmanager's options from the configuration") {
  auto jm = jobmanager_options::from(
    config_of({"jobmanager.rpc.port=7000", "high-availability.storageDir=/s",
               "slot.request.timeout=1 min", "high-availability.cluster-id=c1",
               "resourcemanager.taskmanager-timeout=2 s"}));
  REQUIRE(jm);
  CHECK(jm->port == 7000);
  CHECK(jm->address == "127.0.0.1");
  CHECK(jm->state_dir == "/s");
  CHECK(jm->job_master.slot_request_timeout == 1min);
  CHECK(jm->remote.cluster_id == "c1");
  CHECK(jm->resource_manager.pool.idle_timeout == 2s);
  CHECK(jm->resource_manager.heartbeat.interval == 500ms);
  CHECK(jm->job_master.heartbeat.timeout == 3s);
  auto bad = configuration::load(std::nullopt, {"jobmanager.rpc.port=70000"});
  REQUIRE_FALSE(bad);
  CHECK(bad.error() == make_error(errc::invalid_config));
  CHECK(describe(bad.error())
        == "-Djobmanager.rpc.port=70000: key 'jobmanager.rpc.port': expected a "
           "value in [0, 65535], got '70000'");
}

TEST_CASE("loopback addresses: 127.0.0.0/8, ::1 and localhost only") {
  for (auto a : {"127.0.0.1", "127.255.0.9", "::1", "localhost", "LocalHost",
                 "0:0:0:0:0:0:0:1"})
    CHECK_MESSAGE(is_loopback_address(a), a);
  for (auto a : {"0.0.0.0", "::", "", "10.0.0.1", "128.0.0.1", "::2",
                 "::ffff:10.0.0.1", "localhost.example.com", "master",
                 "127.0.0.1 ", "127.1"})
    CHECK_FALSE_MESSAGE(is_loopback_address(a), a);
}

TEST_CASE("a jobmanager on a non-loopback address needs an explicit TLS "
          "decision") {
  auto rule = [](const std::string& address,
                 std::vector<std::string> dynamic = {}) {
    auto w = listen_security_warning(config_of(dynamic), address);
    return w ? *w : "error: " + describe(w.error());
  };
  // Loopback: nothing to decide.
  CHECK(rule("127.0.0.1") == "");
  CHECK(rule("::1", {"security.ssl.internal.enabled=false"}) == "");
  // Anything else: refused unless the key is set, to either value.
  CHECK(rule("0.0.0.0")
        == "error: refusing to listen on 0.0.0.0 without TLS: set "
           "security.ssl.internal.enabled: true (see docs/security.md), or "
           "false to accept unauthenticated connections from the network");
  CHECK(rule("::").find("error: refusing to listen on :: without TLS") == 0);
  CHECK(rule("").find("error: refusing to listen on '' (every address) "
                      "without TLS")
        == 0);
  CHECK(rule("10.1.2.3", {"security.ssl.internal.enabled=true"}) == "");
  CHECK(rule("0.0.0.0", {"security.ssl.internal.enabled=false"})
        == "WARNING: listening on 0.0.0.0 without TLS: anyone who can reach "
           "this port can run code on the cluster");
  // The jobmanager's options carry the decision.
  auto refused = jobmanager_options::from(
    config_of({"jobmanager.rpc.address=0.0.0.0"}));
  REQUIRE_FALSE(refused);
  CHECK(refused.error() == make_error(errc::invalid_config));
  auto warned = jobmanager_options::from(
    config_of({"jobmanager.rpc.address=0.0.0.0",
               "security.ssl.internal.enabled=false"}));
  REQUIRE(warned);
  CHECK(warned->security_warning.find("WARNING: listening on 0.0.0.0") == 0);
  auto local = jobmanager_options::from(config_of({}));
  REQUIRE(local);
  CHECK(local->security_warning == "");
}

TEST_CASE("the embedded cluster's options from the configuration") {
  auto mc = mini_cluster_options::from(config_of({}));
  CHECK(mc.task_executors == 1);
  CHECK(mc.state_dir.empty());
  CHECK(mc.checkpoint_dir.empty());
  CHECK(mc.job_master.heartbeat.interval == 0ms); // one process: none
  mc = mini_cluster_options::from(
    config_of({"minicluster.number-of-taskmanagers=3",
               "high-availability.storageDir=/s",
               "cluster.evenly-spread-out-slots=true"}));
  CHECK(mc.task_executors == 3);
  CHECK(mc.checkpoint_dir == "/s/checkpoints");
  CHECK(mc.resource_manager.evenly_spread_out_slots);
}

TEST_CASE("weir run --state-dir says what became of each recovered job") {
  job_status s;
  s.id = job_id::random();
  s.name = "wide";
  s.state = job_state::running;
  auto id = s.id.to_string();
  auto line = [&](const std::optional<job_result>& r = std::nullopt) {
    return cli::recovered_job_line(s, r, "DIR", 1);
  };
  auto head = "weir run: recovered job " + id + " (wide) from DIR; ";
  CHECK(line() == head + "it was still RUNNING and was left unfinished in DIR");
  s.slots_needed = 2;
  s.slots_missing = 2;
  CHECK(line() == head + "it is waiting for 2 of its 2 slots (this cluster "
                         "has 1) and was left unfinished in DIR");
  job_result r;
  r.id = s.id;
  r.state = job_state::failed;
  r.error = "boom";
  s.state = job_state::failed;
  CHECK(line(r) == head + "it ended FAILED: boom");
  r.state = job_state::finished;
  r.error.clear();
  CHECK(line(r) == head + "it finished");
  // An ended job whose result could not be fetched.
  s.state = job_state::canceled;
  CHECK(line() == head + "it ended CANCELED");
}
