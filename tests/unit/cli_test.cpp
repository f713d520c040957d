// The CLI's option tables and the cluster's options as the configuration
// sets them; command lines read flag by flag; --help against the docs.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "cli/action_flags.hpp"
#include "cli/config_flags.hpp"
#include "cli/driver_flags.hpp"
#include "cli/flag_table.hpp"
#include "cli/job_args.hpp"
#include "cli/job_command.hpp"
#include "cli/local_recovery.hpp"
#include "cli/task_load_lines.hpp"
#include "cli/taskmanager_flags.hpp"
#include "cluster/mini_cluster.hpp"
#include "process/processes.hpp"
#include "config/keys.hpp"
#include "net/address.hpp"
#include "messages/errors.hpp"
#include "temp_dir.hpp"

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

TEST_CASE("a taskmanager's sizing flags replace configuration keys") {
  auto cfg = config_of({"taskmanager.numberOfTaskSlots=3",
                        "taskmanager.resource-id=from-config"});
  auto res = parse_taskmanager({"--slots", "5"});
  CHECK_FALSE(cli::flag_replaces<int32_t>(cfg, res, "slots", keys::task_slots));
  CHECK_FALSE(cli::flag_replaces<std::string>(cfg, res, "id",
                                              keys::resource_id));
  auto tm = taskmanager_options::from(cfg);
  CHECK(tm.slots == 5);
  CHECK(tm.id == "from-config");
}

TEST_CASE("a flag and a key set to two values are refused, naming both") {
  auto cfg = config_of({"taskmanager.numberOfTaskSlots=3"});
  auto res = parse_taskmanager({"--slots", "5", "--memory", "1024"});
  auto err = cli::flag_overrides<int32_t>(cfg, res, "slots", keys::task_slots);
  CHECK(err == make_error(errc::invalid_config));
  CHECK(describe(err) == "--slots 5 and -Dtaskmanager.numberOfTaskSlots=3 "
                         "both set 'taskmanager.numberOfTaskSlots'; give one");
  CHECK(taskmanager_options::from(cfg).slots == 3);
  // The same value in another spelling is no conflict.
  cfg = config_of({"taskmanager.memory.task.heap.size=1g"});
  CHECK_FALSE(cli::flag_overrides<int64_t>(cfg, res, "memory",
                                           keys::taskmanager_heap, "m"));
  // Where jobs are stored is never taken from one of two places silently.
  test::temp_dir conf;
  auto file = conf.sub("weir.yaml");
  std::ofstream{file} << "high-availability.storageDir: /a\n";
  auto loaded = configuration::load(file, {});
  REQUIRE(loaded);
  auto jm = cli::flags_of("jobmanager");
  const char* argv[] = {"weir", "--state-dir", "/b"};
  err = cli::flag_overrides<std::string>(*loaded, jm.parse(3, argv),
                                         "state-dir", keys::storage_dir);
  CHECK(describe(err) == "--state-dir /b and " + file + ":1 both set "
                         "'high-availability.storageDir'; give one");
}

TEST_CASE("a flag outside its key's range names the flag, the key and the "
          "range") {
  auto cfg = config_of({});
  auto res = parse_taskmanager({"--slots", "0", "--memory", "99999999"});
  auto err = cli::flag_overrides<int32_t>(cfg, res, "slots", keys::task_slots);
  CHECK(describe(err) == "--slots 0: key 'taskmanager.numberOfTaskSlots': "
                         "expected a value in [1, 32768], got '0'");
  err = cli::flag_overrides<int64_t>(cfg, res, "memory", keys::taskmanager_heap,
                                     "m");
  CHECK(describe(err) == "--memory 99999999: key "
                         "'taskmanager.memory.task.heap.size': "
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
  CHECK(jm->job_master.config.get(keys::slot_request_timeout) == 1min);
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
    CHECK_MESSAGE(net::is_loopback_address(a), a);
  for (auto a : {"0.0.0.0", "::", "", "10.0.0.1", "128.0.0.1", "::2",
                 "::ffff:10.0.0.1", "localhost.example.com", "master",
                 "127.0.0.1 ", "127.1"})
    CHECK_FALSE_MESSAGE(net::is_loopback_address(a), a);
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

// --- command lines: every flag read as itself ----------------------------

namespace {

/// Whether `word` is a flag of `form` (with `value_follows` set).
bool accepts(const std::string& form, const std::string& word,
             bool* value_follows = nullptr) {
  bool follows = false;
  auto ok = cli::flag_table{cli::flags_of(form)}.check(word, follows).empty();
  if (value_follows != nullptr)
    *value_follows = follows;
  return ok;
}

/// A spec with parameters `input` and `file` (a name weir's flags use too).
std::string write_spec(const test::temp_dir& dir) {
  auto path = dir.sub("job.json");
  std::ofstream{path} << R"({"name": "p", "params": {"input": "a", "file": "b"},
    "vertices": [{"id": "s", "operator": "sequence", "params": {"from": 1, "to": 2}},
                 {"id": "out", "operator": "collect"}],
    "edges": [{"from": "s", "to": "out"}]})";
  return path;
}

} // namespace

TEST_CASE("every action but cert takes --config FILE and -Dkey=value") {
  for (auto& form : cli::command_forms()) {
    CAPTURE(form);
    bool follows = false;
    bool config = accepts(form, "--config", &follows);
    bool dynamic = accepts(form, "-Dheartbeat.timeout=2s");
    if (form.rfind("cert ", 0) == 0) {
      CHECK_FALSE(config); // weir cert reads no configuration
      CHECK_FALSE(dynamic);
      continue;
    }
    CHECK(config);
    CHECK(follows);
    CHECK(dynamic);
    CHECK(accepts(form, "-h"));
    CHECK(accepts(form, "--help"));
  }
}

TEST_CASE("a word whose letters are not all flags is no flag at all") {
  for (auto& form : cli::command_forms()) {
    CAPTURE(form);
    auto opts = cli::flags_of(form);
    auto listed = cli::listed_flags(opts);
    cli::flag_table table{opts};
    for (char c = 'A'; c <= 'z'; ++c) {
      std::string flag{'-', c};
      if (!std::isalpha(static_cast<unsigned char>(c))
          || std::find(listed.begin(), listed.end(), flag) != listed.end())
        continue;
      // `c` is no flag: no word with it is one, even when the rest of it
      // reads as flags ("-xh" is not -h).
      CAPTURE(c);
      bool follows = false;
      CHECK_FALSE(table.check(flag + "h", follows).empty());
      CHECK_FALSE(table.check(std::string{'-', 'h', c}, follows).empty());
    }
  }
  bool follows = true;
  CHECK(cli::flag_table{cli::flags_of("info")}.check("-xhelp", follows)
        == "unknown flag '-xhelp'");
  // A value flag takes the rest of its word; boolean flags combine.
  CHECK(accepts("run", "-p4", &follows));
  CHECK_FALSE(follows);
  CHECK(accepts("run", "-dn"));
  CHECK(accepts("run", "-dp", &follows));
  CHECK(follows);
  CHECK(cli::flag_table{cli::flags_of("run")}.check("-D", follows)
        == "-D needs key=value: -Dkey=value sets a configuration key");
}

TEST_CASE("weir run: weir's flags anywhere, job parameters after the spec") {
  test::temp_dir dir;
  auto spec = write_spec(dir);
  cli::flag_table run{cli::flags_of("run")};
  cli::job_args ja;
  auto err = cli::split_job_args(
    "run",
    {"-d", spec, "-b", "--input", "x", "--disableSubmitOptimization",
     "-Dheartbeat.timeout=2s", "--file=y", "-p", "2", "--config", "c.yaml",
     "-n"},
    run, ja);
  REQUIRE_FALSE(err);
  CHECK(ja.spec_path == spec);
  CHECK(ja.weir_args
        == std::vector<std::string>{"weir run", "-d", "-b",
                                    "--disableSubmitOptimization",
                                    "-Dheartbeat.timeout=2s", "-p", "2",
                                    "--config", "c.yaml", "-n"});
  // `file` is the spec's parameter after the spec, weir's flag before it.
  CHECK(ja.program_args
        == std::map<std::string, std::string>{{"file", "y"}, {"input", "x"}});
  cli::job_args before;
  REQUIRE_FALSE(cli::split_job_args("run", {"--file", "f.txt", spec}, run,
                                    before));
  CHECK(before.program_args.empty());
  CHECK(before.weir_args
        == std::vector<std::string>{"weir run", "--file", "f.txt"});
}

TEST_CASE("weir run: unknown flags are named wherever they are") {
  test::temp_dir dir;
  auto spec = write_spec(dir);
  cli::flag_table run{cli::flags_of("run")};
  cli::job_args ja;
  CHECK(describe(cli::split_job_args("run", {"-xhelp", spec}, run, ja))
        == "weir run: unknown flag '-xhelp' (see weir run --help)");
  cli::job_args after;
  CHECK(describe(cli::split_job_args("run", {spec, "--inptu", "x"}, run,
                                     after))
        == "weir run: unknown flag '--inptu' (job 'p' takes --file, --input; "
           "see weir run --help)");
  cli::job_args positional;
  CHECK(describe(cli::split_job_args("run", {spec, "x"}, run, positional))
        == "weir run: unexpected argument 'x' after the job spec (job 'p' "
           "takes --file, --input; see weir run --help)");
}

TEST_CASE("-p sets parallelism.default; the key alone works too") {
  test::temp_dir dir;
  auto spec = write_spec(dir);
  auto opts = cli::flags_of("run");
  int code = 0;
  auto cmd = cli::parse_job_command("run", opts, {spec, "-p", "5"}, code);
  REQUIRE(cmd);
  // -p and -D on one command line: refused, naming both.
  auto cfg = config_of({"parallelism.default=3"});
  std::optional<int32_t> p;
  CHECK_FALSE(cli::default_parallelism("weir run", cfg, *cmd, p));
  // -p over a file's default.
  test::temp_dir conf;
  auto file = conf.sub("weir.yaml");
  std::ofstream{file} << "parallelism.default: 3\n";
  auto loaded = configuration::load(file, {});
  REQUIRE(loaded);
  cfg = *loaded;
  REQUIRE(cli::default_parallelism("weir run", cfg, *cmd, p));
  CHECK(p == 5);
  CHECK(cfg.origin(keys::parallelism_default) == "-p 5");
  auto without = cli::parse_job_command("run", opts, {spec}, code);
  REQUIRE(without);
  cfg = config_of({"parallelism.default=3"});
  REQUIRE(cli::default_parallelism("weir run", cfg, *without, p));
  CHECK(p == 3);
  cfg = config_of({});
  REQUIRE(cli::default_parallelism("weir run", cfg, *without, p));
  CHECK_FALSE(p); // the spec's
  auto typed_long = cli::parse_job_command("run", opts,
                                           {spec, "--parallelism=0"}, code);
  REQUIRE(typed_long);
  CHECK_FALSE(cli::default_parallelism("weir run", cfg, *typed_long, p));
}

// --- --help and docs/configuration.md ------------------------------------

namespace {

/// The flags docs/configuration.md's "## Flags of `weir X`" tables list,
/// by command ("run", "status", "cert"; "" for every action's).
std::map<std::string, std::set<std::string>> documented_flags() {
  auto* root = std::getenv("WEIR_SOURCE_ROOT");
  REQUIRE(root != nullptr);
  std::ifstream in{std::string{root} + "/docs/configuration.md"};
  REQUIRE(in.good());
  std::map<std::string, std::set<std::string>> out;
  std::vector<std::string> commands;
  std::regex heading{"`weir ([^`]+)`"};
  std::regex token{"`(-[^` ]+)"};
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("## ", 0) == 0) {
      commands.clear();
      if (line == "## Flags of every action")
        commands.push_back("");
      else if (line.rfind("## Flags of ", 0) == 0)
        for (std::sregex_iterator i{line.begin(), line.end(), heading}, end;
             i != end; ++i)
          commands.push_back((*i)[1]);
      continue;
    }
    if (commands.empty() || line.rfind("| `", 0) != 0)
      continue;
    auto first_cell = line.substr(1, line.find('|', 1) - 1);
    for (std::sregex_iterator i{first_cell.begin(), first_cell.end(), token},
         end;
         i != end; ++i) {
      auto flag = (*i)[1].str();
      if (flag.rfind("-D", 0) == 0 && flag.find('=') != std::string::npos)
        flag = "-D"; // -Dkey=value
      flag = flag.substr(0, flag.find('='));
      if (flag.size() > 2 && flag[1] == '-' && std::isupper(flag[2]))
        continue; // --PARAM: a job parameter
      for (auto& c : commands)
        out[c].insert(flag);
    }
  }
  return out;
}

} // namespace

TEST_CASE("each action's --help lists the flags docs/configuration.md lists") {
  auto docs = documented_flags();
  REQUIRE(docs.count("") == 1);
  std::map<std::string, std::set<std::string>> helped; // by command
  for (auto& form : cli::command_forms()) {
    auto command = form.rfind("cert ", 0) == 0 ? std::string{"cert"} : form;
    auto opts = cli::flags_of(form);
    for (auto& flag : cli::listed_flags(opts))
      helped[command].insert(flag);
    CHECK_MESSAGE(cli::help_text(opts).find("positional parameters")
                    == std::string::npos,
                  form);
  }
  for (auto& flag : cli::driver_resource_flags())
    helped["run -D"].insert(flag); // -Dhm MB: --driverheapmemory MB
  for (auto& [command, flags] : helped) {
    CAPTURE(command);
    auto expected = docs[command];
    if (command != "cert")
      expected.insert(docs[""].begin(), docs[""].end());
    for (auto& f : flags)
      CHECK_MESSAGE(expected.count(f) == 1,
                    "weir " << command << " --help lists " << f
                            << ", docs/configuration.md does not");
    for (auto& f : expected)
      CHECK_MESSAGE(flags.count(f) == 1,
                    "docs/configuration.md lists " << f << " for weir "
                                                   << command
                                                   << ", its --help does not");
  }
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

TEST_CASE("weir status: a line per task, rates summed, the highest busy and "
          "backpressured time of its subtasks") {
  auto sub = [](std::string task, execution_state state, double in, double out,
                double busy, double bp) {
    subtask_status s;
    s.task = std::move(task);
    s.state = state;
    s.metrics.load.records_in_per_s = in;
    s.metrics.load.records_out_per_s = out;
    s.metrics.load.busy_ms_per_s = busy;
    s.metrics.load.backpressured_ms_per_s = bp;
    return s;
  };
  using st = execution_state;
  std::vector<subtask_status> subtasks{
    sub("events -> parse", st::running, 1000.4, 999.6, 12.2, 730.5),
    sub("events -> parse", st::running, 2000, 2000, 40, 512),
    sub("sink", st::running, 3000, 3000, 960.7, 0),
    sub("sink", st::finished, 9999, 9999, 999, 999)};
  CHECK(cli::task_load_lines(subtasks)
        == std::vector<std::string>{
          "  events -> parse  3000 in/s  3000 out/s  busy 40 ms/s  "
          "backpressured 731 ms/s",
          "  sink             3000 in/s  3000 out/s  busy 961 ms/s  "
          "backpressured 0 ms/s"});
  CHECK(cli::task_load_lines({}).empty());
}

TEST_CASE("weir status: watermarks per task, the least of its subtasks, only "
          "for tasks that have any") {
  auto sub = [](std::string task, int64_t in, int64_t out) {
    subtask_status s;
    s.task = std::move(task);
    s.metrics.load.input_watermark = in;
    s.metrics.load.output_watermark = out;
    return s;
  };
  constexpr auto none = std::numeric_limits<int64_t>::min();
  constexpr auto end = std::numeric_limits<int64_t>::max();
  std::vector<subtask_status> subtasks{
    sub("events -> parsed", none, 1764496810250),
    sub("counts", 1764496810250, 1764496809999),
    sub("counts", 1764496812000, end),
    sub("out", none, none)};
  CHECK(cli::watermark_lines(subtasks)
        == std::vector<std::string>{
          "  events -> parsed  input none  output 2025-11-30T10:00:10.250Z",
          "  counts            input 2025-11-30T10:00:10.250Z  output "
          "2025-11-30T10:00:09.999Z"});
  CHECK(cli::watermark_lines({sub("a", none, none)}).empty());
  CHECK(cli::watermark_lines({sub("a", end, end)})
        == std::vector<std::string>{"  a  input end  output end"});
}
