// Metrics (docs/operations.md § Metrics): a real Prometheus scrapes the
// jobmanager's /metrics and two taskmanagers' endpoints; the REST API's
// /taskmanagers lists the workers.
#include <doctest/doctest.h>

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <csignal>
#include <map>
#include <regex>
#include <string>

#include <fmt/format.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "cluster_fixture.hpp"
#include "job_specs.hpp"
#include "process.hpp"

using namespace weir::test;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

/// The first URL matching `pattern` (one group) in `p`'s log after
/// `marker` appeared ("" after 30 s).
std::string logged_url(running_process& p, const std::string& marker,
                       const std::string& pattern) {
  if (!p.wait_for_stderr(marker, 30s) || !p.wait_for_stderr("\n", 30s))
    return {};
  std::smatch m;
  const auto& log = p.stderr_so_far();
  if (!std::regex_search(log, m, std::regex{pattern}))
    return {};
  return m[1];
}

std::string rest_url(running_process& jm) {
  return logged_url(jm, "REST API at http://",
                    "REST API at (http://[0-9.]+:[0-9]+)\n");
}

/// "HOST:PORT" of a taskmanager's metrics endpoint.
std::string metrics_target(running_process& tm) {
  return logged_url(tm, "metrics at http://",
                    "metrics at http://([0-9.]+:[0-9]+)/metrics\n");
}

struct answer {
  int status = 0;
  std::string body;
};

answer http_get(const std::string& url, const std::string& path) {
  httplib::Client client{url};
  client.set_connection_timeout(10s);
  client.set_read_timeout(10s);
  auto res = client.Get(path);
  if (!res)
    return {};
  return answer{res->status, res->body};
}

/// `text` for a URL's query: everything but letters and digits escaped.
std::string percent_encoded(const std::string& text) {
  std::string out;
  for (unsigned char ch : text)
    out += std::isalnum(ch) ? std::string(1, static_cast<char>(ch))
                            : fmt::format("%{:02X}", ch);
  return out;
}

/// Even numbers of 1..1000 (500) through a rebalance into a discarding
/// sink: parallelism 2 on two one-slot workers, so each runs one subtask
/// of every chain.
const char* evens_spec = R"({"name": "evens", "parallelism": 2,
  "vertices": [
    {"id": "numbers", "operator": "sequence", "params": {"from": 1, "to": 1000}},
    {"id": "even", "operator": "filter", "params": {"function": "even"}},
    {"id": "out", "operator": "discard"}],
  "edges": [
    {"from": "numbers", "to": "even", "partitioning": "forward"},
    {"from": "even", "to": "out", "partitioning": "rebalance"}]})";

/// A Prometheus server (Debian's `prometheus`) scraping `targets` every
/// second, on a free loopback port; stopped with the object.
struct prometheus_server {
  std::string url;
  std::unique_ptr<running_process> proc;

  prometheus_server(const temp_dir& dir,
                    const std::vector<std::string>& targets) {
    std::string list;
    for (auto& t : targets)
      list += (list.empty() ? "'" : ", '") + t + "'";
    auto config = dir.write("prom.yml",
                            fmt::format("global: {{scrape_interval: 1s}}\n"
                                        "scrape_configs:\n"
                                        "  - job_name: weir\n"
                                        "    static_configs:\n"
                                        "      - targets: [{}]\n",
                                        list));
    auto binary = on_path("prometheus");
    INFO("Debian's prometheus package is missing: scripts/bootstrap "
         "installs it");
    REQUIRE_FALSE(binary.empty());
    auto port = free_port();
    REQUIRE(port != 0);
    url = fmt::format("http://127.0.0.1:{}", port);
    proc = std::make_unique<running_process>(std::vector<std::string>{
      binary, "--config.file=" + config,
      fmt::format("--web.listen-address=127.0.0.1:{}", port),
      "--storage.tsdb.path=" + dir.file("tsdb")});
  }

  ~prometheus_server() {
    proc->signal(SIGTERM);
    proc->finish(30s);
  }

  /// The single value of instant query `q` ("" when it has no single
  /// result yet).
  std::string query(const std::string& q) {
    auto a = http_get(url, "/api/v1/query?query=" + percent_encoded(q));
    if (a.status != 200)
      return {};
    auto body = json::parse(a.body, nullptr, false);
    if (body.is_discarded() || body["status"] != "success")
      return {};
    auto& result = body["data"]["result"];
    if (result.size() != 1)
      return {};
    return result[0]["value"][1];
  }
};

} // namespace

TEST_CASE("Prometheus scrapes the jobmanager and two taskmanagers") {
  session_cluster c{{"-Drest.port=0"}, {"-Dmetrics.reporter.prom.port=0"}};
  auto rest = rest_url(*c.jobmanager);
  REQUIRE_FALSE(rest.empty());
  c.add_worker("tm-1", 1);
  c.add_worker("tm-2", 1);
  auto tm1 = metrics_target(*c.workers[0]);
  auto tm2 = metrics_target(*c.workers[1]);
  REQUIRE_FALSE(tm1.empty());
  REQUIRE_FALSE(tm2.empty());

  auto run = c.client({"run", c.dir.write("evens.json", evens_spec)});
  REQUIRE(run.exit_code == 0);
  std::smatch m;
  auto said = run.out + run.err;
  REQUIRE(std::regex_search(said, m, std::regex{"JobID ([0-9a-f]{32})"}));
  std::string id = m[1];

  prometheus_server prom{c.dir, {rest.substr(7), tm1, tm2}};
  // The finished job's final numbers stay on the taskmanagers: its sink
  // wrote 500 records over its two subtasks, one on each worker.
  auto out = fmt::format(
    R"(sum(flink_taskmanager_job_task_numRecordsOut{{job_id="{}",task_name="out"}}))",
    id);
  CHECK(eventually([&] { return prom.query(out) == "500"; }));
  CHECK(prom.query(fmt::format(
          R"(count(flink_taskmanager_job_task_numRecordsOut{{job_id="{}",task_name="out"}}))",
          id))
        == "2");
  CHECK(prom.query(fmt::format(
          R"(sum(flink_taskmanager_job_task_numRecordsIn{{job_id="{}",task_name="numbers -> even"}}))",
          id))
        == "1000");
  CHECK(eventually([&] {
    return prom.query("flink_jobmanager_numRegisteredTaskManagers") == "2";
  }));
  CHECK(prom.query(R"(flink_jobmanager_numJobs{state="FINISHED"})") == "1");
  CHECK(prom.query("flink_jobmanager_numJobsSubmitted") == "1");
  CHECK(prom.query(fmt::format(R"(flink_jobmanager_job_numRestarts{{job_id="{}"}})",
                               id))
        == "0");
  CHECK(prom.query("sum(flink_taskmanager_taskSlotsTotal)") == "2");
  CHECK(prom.query("count(flink_taskmanager_Status_Process_RSS > 0)") == "2");
}

TEST_CASE("a Flink dashboard's PromQL shows a running job's numbers") {
  session_cluster c{{"-Drest.port=0"}, {"-Dmetrics.reporter.prom.port=0"}};
  auto rest = rest_url(*c.jobmanager);
  REQUIRE_FALSE(rest.empty());
  c.add_worker("tm-1", 2);
  auto tm1 = metrics_target(*c.workers[0]);
  REQUIRE_FALSE(tm1.empty());
  auto run = c.client({"run", "-d", c.dir.write("stream.json",
                                                checkpointed_stream_spec)});
  REQUIRE(run.exit_code == 0);
  auto id = run.out.substr(0, 32);
  auto job = json::parse(http_get(rest, "/jobs/" + id).body);
  std::string events = job["vertices"][0]["id"];
  prometheus_server prom{c.dir, {rest.substr(7), tm1}};
  auto number = [&](const std::string& q) {
    auto v = prom.query(fmt::format(fmt::runtime(q), id));
    return v.empty() ? -1.0 : std::stod(v);
  };
  // The queries of Flink's common dashboards, on Flink's series names.
  // Records per second in and out of each task:
  CHECK(eventually([&] {
    return number(R"(sum(rate(flink_taskmanager_job_task_numRecordsOut{{job_id="{}",task_name="events"}}[30s])))")
           > 0;
  }));
  CHECK(eventually([&] {
    return number(R"(sum(rate(flink_taskmanager_job_task_numRecordsIn{{job_id="{}",task_name="sink"}}[30s])))")
           > 0;
  }));
  // One series per subtask, its task_id the REST API's vertex id, and a
  // host label.
  CHECK(number(fmt::format(R"(count(flink_taskmanager_job_task_numRecordsOut{{{{job_id="{{}}",task_id="{}",host!=""}}}}))",
                           events))
        == 2);
  // Checkpoints: how many, and how long the last took.
  CHECK(eventually([&] {
    return number(R"(flink_jobmanager_job_numberOfCompletedCheckpoints{{job_id="{}"}})")
           >= 2;
  }));
  CHECK(number(R"(flink_jobmanager_job_lastCheckpointDuration{{job_id="{}"}})")
        >= 0);
  // Back pressure: ms per second, per task at most 1000.
  auto bp = number(R"(max(flink_taskmanager_job_task_backPressuredTimeMsPerSecond{{job_id="{}"}}))");
  CHECK(bp >= 0);
  CHECK(bp <= 1000);
  CHECK(c.client({"cancel", id}).exit_code == 0);
}

TEST_CASE("a taskmanager's metrics port: refused values and a port in use") {
  session_cluster c{{"-Drest.port=0"}};
  auto bad = run_weir({"taskmanager", "-m", c.address,
                       "-Dmetrics.reporter.prom.port=9260-9250"},
                      30s);
  CHECK(bad.exit_code == 2);
  CHECK(bad.err
        == "weir taskmanager: metrics.reporter.prom.port: '9260-9250' is not "
           "a port, a range FROM-TO or 0\n");
  // The jobmanager's REST port is taken: a taskmanager set to it ends.
  auto rest = rest_url(*c.jobmanager);
  auto port = rest.substr(rest.rfind(':') + 1);
  auto used = run_weir({"taskmanager", "-m", c.address,
                        "-Dmetrics.reporter.prom.port=" + port},
                       30s);
  CHECK(used.exit_code == 3);
  CHECK(used.err.find(fmt::format("weir taskmanager: cannot listen on "
                                  "127.0.0.1:{} for the metrics "
                                  "(metrics.reporter.prom.host, "
                                  "metrics.reporter.prom.port)\n",
                                  port))
        != std::string::npos);
}

TEST_CASE("/taskmanagers lists the workers with their slots") {
  session_cluster c{{"-Drest.port=0"}};
  auto rest = rest_url(*c.jobmanager);
  REQUIRE_FALSE(rest.empty());
  c.add_worker("tm-1", 2);
  c.add_worker("tm-2", 3);
  auto slots = [&] {
    auto a = http_get(rest, "/taskmanagers");
    REQUIRE(a.status == 200);
    std::map<std::string, std::pair<int, int>> out;
    auto body = json::parse(a.body);
    for (auto& tm : body["taskmanagers"])
      out[tm["weir-name"].get<std::string>()] = {tm["slotsNumber"].get<int>(),
                                                 tm["freeSlots"].get<int>()};
    return out;
  };
  using slot_map = std::map<std::string, std::pair<int, int>>;
  CHECK(slots() == slot_map{{"tm-1", {2, 2}}, {"tm-2", {3, 3}}});

  // Flink's 32-hex resource id (derived from the name); the name as well.
  std::string hex;
  auto list = json::parse(http_get(rest, "/taskmanagers").body);
  for (auto& t : list["taskmanagers"])
    if (t["weir-name"] == "tm-2")
      hex = t["id"];
  CHECK(std::regex_match(hex, std::regex{"[0-9a-f]{32}"}));
  auto one = http_get(rest, "/taskmanagers/" + hex);
  REQUIRE(one.status == 200);
  auto tm = json::parse(one.body);
  CHECK(tm["id"] == hex);
  CHECK(tm["weir-name"] == "tm-2");
  CHECK(json::parse(http_get(rest, "/taskmanagers/tm-2").body) ["id"] == hex);
  CHECK(tm["slotsNumber"] == 3);
  CHECK(tm["freeSlots"] == 3);
  CHECK(tm["timeSinceLastHeartbeat"].get<int64_t>() > 0);
  // The data port it announced when it registered.
  CHECK(tm["dataPort"].get<int>() > 0);
  auto& hw = tm["hardware"];
  CHECK(hw["cpuCores"].get<int>() > 0);
  CHECK(hw["physicalMemory"].get<int64_t>() > 0);
  CHECK(hw["freeMemory"].get<int64_t>() > 0);
  CHECK(hw["managedMemory"] == 0);

  // A job that never ends holds 2 slots: evenly spread out or not, 3 of
  // the 5 stay free.
  auto spec = c.dir.write("endless.json", R"({"name": "endless",
    "parallelism": 2,
    "vertices": [
      {"id": "numbers", "operator": "sequence", "params": {"from": 1, "to": 1000000000000}},
      {"id": "out", "operator": "discard"}],
    "edges": [{"from": "numbers", "to": "out", "partitioning": "forward"}]})");
  auto submit = c.client({"run", "-d", spec});
  REQUIRE(submit.exit_code == 0);
  CHECK(eventually([&] {
    int free = 0;
    for (auto& [id, s] : slots())
      free += s.second;
    return free == 3;
  }));
  auto unknown = http_get(rest, "/taskmanagers/nope");
  CHECK(unknown.status == 404);
  CHECK(json::parse(unknown.body)
        == json{{"errors", {"TaskManager nope does not exist"}}});
}
