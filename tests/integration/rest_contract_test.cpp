// Flink's REST contract (docs/operations.md § REST API): real answers of a
// real cluster, for jobs in every state, checked by a real validator (ajv)
// against Flink's own OpenAPI description of its REST API, kept in
// tests/rest_contract/ as Flink publishes it.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "cluster_fixture.hpp"
#include "job_specs.hpp"
#include "process.hpp"
#include "rest_client.hpp"
#include "user_code_paths.hpp"

using namespace weir::test;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

/// Every answer the test cases validated: the coverage check (the last
/// test case) looks for each served operation among them.
json all_answers = json::array();

/// Requests to the API at `url`, each answer kept for the validator.
struct recorder {
  std::string url;
  json answers = json::array();

  answer keep(const char* method, const std::string& path, answer a) {
    answers.push_back({{"method", method},
                       {"path", path},
                       {"status", a.status},
                       {"body", a.body}});
    all_answers.push_back(answers.back());
    return a;
  }
  answer get(const std::string& path) {
    return keep("GET", path, weir::test::get(url, path));
  }
  answer post(const std::string& path, const json& body) {
    return keep("POST", path, weir::test::post(url, path, body));
  }
  answer patch(const std::string& path) {
    return keep("PATCH", path, weir::test::patch(url, path));
  }

  /// Every GET of the cluster as a whole.
  void cluster() {
    for (auto path : {"/overview", "/jobs", "/jobs/overview", "/config",
                      "/jobmanager/config", "/taskmanagers",
                      "/jobmanager/metrics",
                      "/jobmanager/metrics?get=taskSlotsTotal,numRunningJobs",
                      "/jobs/metrics", "/jobs/metrics?get=uptime&agg=max,min",
                      "/taskmanagers/metrics",
                      "/taskmanagers/metrics?get=taskSlotsTotal&agg=sum"})
      get(path);
    auto tms = get("/taskmanagers").body;
    for (auto& tm : tms["taskmanagers"]) {
      auto path = "/taskmanagers/" + tm["id"].get<std::string>();
      get(path);
      get(path + "/metrics");
      get(path + "/metrics?get=taskSlotsTotal,taskSlotsAvailable");
    }
  }

  /// Every GET of job `id`, its checkpoints, vertices and subtasks.
  void job(const std::string& id, bool checkpoints = false) {
    auto job = "/jobs/" + id;
    for (auto tail : {"", "/plan", "/config", "/checkpoints", "/exceptions",
                      "/execution-result", "/metrics",
                      "/metrics?get=uptime,numRestarts", "/accumulators"})
      get(job + tail);
    auto details = get(job).body;
    if (checkpoints) {
      get(job + "/checkpoints/config");
      auto stats = weir::test::get(url, job + "/checkpoints").body;
      for (auto& e : stats["history"]) {
        auto cp = job + "/checkpoints/details/"
                  + std::to_string(e["id"].get<int64_t>());
        get(cp);
        for (auto& v : details["vertices"])
          get(cp + "/subtasks/" + v["id"].get<std::string>());
      }
    }
    for (auto& v : details["vertices"]) {
      auto vertex = job + "/vertices/" + v["id"].get<std::string>();
      for (auto tail : {"", "/watermarks", "/backpressure", "/metrics",
                        "/metrics?get=0.numRecordsIn,0.numRecordsOut",
                        "/subtasks/metrics",
                        "/subtasks/metrics?get=numRecordsOut&agg=min,max,sum",
                        "/subtasktimes", "/taskmanagers", "/accumulators",
                        "/subtasks/accumulators"})
        get(vertex + tail);
      auto subtasks = weir::test::get(url, vertex).body;
      for (auto& t : subtasks["subtasks"]) {
        auto sub = vertex + "/subtasks/" + std::to_string(t["subtask"].get<int>());
        auto attempt = sub + "/attempts/" + std::to_string(t["attempt"].get<int>());
        for (auto path : {sub, attempt, attempt + "/accumulators",
                          sub + "/metrics", sub + "/metrics?get=numRecordsIn"})
          get(path);
      }
    }
  }

  /// Polls savepoint operation `tid` of job `id` until it completed.
  json completed(const std::string& id, const std::string& tid) {
    json s;
    REQUIRE(eventually([&] {
      auto a = weir::test::get(url, "/jobs/" + id + "/savepoints/" + tid);
      REQUIRE(a.status == 200);
      s = a.body;
      return s["status"]["id"] == "COMPLETED";
    }));
    get("/jobs/" + id + "/savepoints/" + tid);
    return s;
  }
};

/// What the validator says of `answers`. Every answer validated so far
/// is kept as artefact rest_contract_answers.json, for people to read.
process_result validate(temp_dir& dir, const json& answers) {
  auto file = dir.write("answers.json", answers.dump(1));
  if (auto* artifacts = std::getenv("WEIR_ARTIFACT_DIR")) {
    std::filesystem::create_directories(artifacts);
    std::ofstream{std::filesystem::path{artifacts}
                  / "rest_contract_answers.json"}
      << all_answers.dump(1);
  }
  return run_process({on_path("node"),
                      source_path("tests/rest_contract/validate.js"),
                      source_path("tests/rest_contract/rest_v1_dispatcher.yml"),
                      source_path("tests/rest_contract/adjustments.json"),
                      file});
}

/// The spec's operations ("GET /jobs/{jobid}"), as the validator lists them.
std::vector<std::string> spec_operations() {
  auto r = run_process({on_path("node"),
                        source_path("tests/rest_contract/validate.js"),
                        source_path("tests/rest_contract/rest_v1_dispatcher.yml"),
                        "--operations"});
  REQUIRE(r.exit_code == 0);
  return lines_of(r.out);
}

/// The coverage table of docs/operations.md § Flink's OpenAPI contract:
/// each operation with what weir does ("served", "not yet: 404", ...).
std::map<std::string, std::string> documented_coverage() {
  auto doc = read_file(source_path("docs/operations.md"));
  auto from = doc.find("| operation | weir |");
  REQUIRE(from != std::string::npos);
  std::map<std::string, std::string> out;
  std::regex row{R"(\| `([A-Z]+ [^`]+)` \| ([^|]+) \|)"};
  for (auto& line : lines_of(doc.substr(from))) {
    if (line.rfind("|", 0) != 0)
      break;
    std::smatch m;
    if (std::regex_match(line, m, row))
      out[m[1]] = m[2];
  }
  return out;
}

/// `templ` ("/jobs/{jobid}") as a regex of the paths it stands for.
std::regex path_pattern(const std::string& templ) {
  return std::regex{std::regex_replace(templ, std::regex{R"(\{[^}]+\})"},
                                       "[^/?]+")
                    + R"((\?.*)?)"};
}

std::string job_id_of(const process_result& detached) {
  REQUIRE(detached.exit_code == 0);
  return detached.out.substr(0, 32);
}

} // namespace

TEST_CASE("every answer of the REST API is valid against Flink's spec") {
  rest_cluster c;
  recorder r{c.url};
  c.add_worker("tm-1", 3);
  r.cluster(); // no jobs yet

  // A finished job.
  auto run = c.client({"run", "examples/collect.json", "--to", "10"});
  REQUIRE(run.exit_code == 0);
  auto finished = weir::test::get(c.url, "/jobs").body["jobs"][0]["id"]
                    .get<std::string>();

  // A failed job, restarted once first.
  auto input = c.dir.write("input.txt", "1\nx\n");
  auto throws = c.dir.write("throws.json", throws_once_spec(input));
  REQUIRE(c.client({"run", throws, "--libjars", test_plugin("faults")})
            .exit_code
          == 1);

  // A running job that checkpoints, then takes savepoints, then is
  // cancelled.
  auto stream = c.dir.write("stream.json", checkpointed_stream_spec);
  auto running = job_id_of(c.client({"run", "-d", stream}));
  auto job = "/jobs/" + running;
  REQUIRE(eventually([&] {
    return weir::test::get(c.url, job + "/checkpoints")
             .body["counts"]["completed"]
           >= 2;
  }));
  r.cluster();
  r.job(running, true);

  // The metric views' numbers are the cluster's and the job's.
  CHECK(r.get("/jobmanager/metrics?get=taskSlotsTotal").body
        == json::array({{{"id", "taskSlotsTotal"}, {"value", "3"}}}));
  CHECK(r.get("/taskmanagers/metrics?get=taskSlotsTotal&agg=sum").body
        == json::array({{{"id", "taskSlotsTotal"}, {"sum", 3.0}}}));
  auto completed_cps = r.get(job + "/metrics?get=numberOfCompletedCheckpoints")
                         .body[0]["value"]
                         .get<std::string>();
  CHECK(std::stoi(completed_cps) >= 2);
  // A completed checkpoint's details: each vertex acknowledged by each of
  // its subtasks.
  auto latest = weir::test::get(c.url, job + "/checkpoints")
                  .body["latest"]["completed"]["id"]
                  .get<int64_t>();
  auto events_id = weir::test::get(c.url, job).body["vertices"][0]["id"]
                     .get<std::string>();
  auto details = r.get(job + "/checkpoints/details/" + std::to_string(latest))
                   .body;
  CHECK(details["tasks"][events_id]["num_subtasks"] == 2);
  CHECK(details["tasks"][events_id]["num_acknowledged_subtasks"] == 2);
  auto subtasks = r.get(job + "/checkpoints/details/" + std::to_string(latest)
                        + "/subtasks/" + events_id)
                    .body["subtasks"];
  REQUIRE(subtasks.size() == 2);
  for (auto& t : subtasks) {
    CHECK(t["status"] == "completed");
    CHECK(t["ack_timestamp"].get<int64_t>() > 0);
  }
  auto names = r.get(job + "/metrics").body;
  CHECK(names.size() >= 9);
  CHECK(names[0] == json{{"id", "uptime"}});
  CHECK(weir::test::get(c.url, "/jobs/metrics?agg=median").body
        == json{{"errors", {"query parameter 'agg': 'median' is not one of "
                            "min, max, avg, sum"}}});

  auto sp = r.post(job + "/savepoints",
                   {{"target-directory", c.dir.file("savepoints")}});
  REQUIRE(sp.status == 202);
  auto written = r.completed(running, sp.body["request-id"]);
  // The same client trigger id twice names one savepoint (Flink's
  // idempotent triggering).
  std::string mine = "00112233445566778899aabbccddeeff";
  for (int i = 0; i < 2; ++i)
    CHECK(r.post(job + "/savepoints",
                 {{"target-directory", c.dir.file("savepoints")},
                  {"triggerId", mine}})
            .body
          == json{{"request-id", mine}});
  r.completed(running, mine);
  // One that fails: its directory is under a file.
  auto bad = r.post(job + "/savepoints",
                    {{"target-directory", c.dir.file("input.txt") + "/sp"}});
  REQUIRE(bad.status == 202);
  r.completed(running, bad.body["request-id"]);
  r.job(running, true);

  // Disposing of the savepoint deletes its file; a file that is no
  // savepoint is left alone, and the operation says why.
  std::string location = written["operation"]["location"];
  auto disposal = r.post("/savepoint-disposal", {{"savepoint-path", location}});
  REQUIRE(disposal.status == 200);
  auto disposed = r.get("/savepoint-disposal/"
                        + disposal.body["request-id"].get<std::string>());
  CHECK(disposed.body == json{{"status", {{"id", "COMPLETED"}}},
                              {"operation", json::object()}});
  CHECK_FALSE(exists(location.substr(5)));
  auto refused = r.post("/savepoint-disposal",
                        {{"savepoint-path", c.dir.file("input.txt")}});
  auto kept = r.get("/savepoint-disposal/"
                    + refused.body["request-id"].get<std::string>());
  CHECK(kept.body["operation"]["failure-cause"]["stack-trace"]
          .get<std::string>()
          .find(c.dir.file("input.txt"))
        != std::string::npos);
  CHECK(exists(c.dir.file("input.txt")));

  // Rescaling in place (the cluster's third slot): Flink's trigger, then
  // its status until COMPLETED, with every vertex at the new parallelism.
  auto rescaling = r.patch(job + "/rescaling?parallelism=3");
  REQUIRE(rescaling.status == 200);
  std::string rid = rescaling.body["request-id"];
  json rescaled;
  REQUIRE(eventually([&] {
    rescaled = weir::test::get(c.url, job + "/rescaling/" + rid).body;
    return rescaled["status"]["id"] == "COMPLETED";
  }));
  r.get(job + "/rescaling/" + rid);
  CHECK(rescaled["operation"] == json::object());
  auto rescaled_job = r.get(job).body;
  for (auto& v : rescaled_job["vertices"])
    CHECK(v["parallelism"] == 3);
  // One the cluster has no slots for: the operation fails, saying why.
  auto too_big = r.patch(job + "/rescaling?parallelism=4");
  REQUIRE(too_big.status == 200);
  REQUIRE(eventually([&] {
    rescaled = weir::test::get(c.url, job + "/rescaling/"
                                        + too_big.body["request-id"]
                                            .get<std::string>())
                 .body;
    return rescaled["status"]["id"] == "COMPLETED";
  }));
  r.get(job + "/rescaling/" + too_big.body["request-id"].get<std::string>());
  CHECK(rescaled["operation"]["failure-cause"]["stack-trace"]
          .get<std::string>()
          .find("it needs 4 slots at parallelism 4; it holds 3 and the "
                "cluster has 0 free")
        != std::string::npos);

  REQUIRE(r.patch(job + "?mode=cancel").status == 202);
  REQUIRE(eventually([&] {
    return weir::test::get(c.url, job).body["state"] == "CANCELED";
  }));

  r.cluster();
  r.job(finished);
  r.job(running, true);
  auto all = weir::test::get(c.url, "/jobs").body;
  for (auto& j : all["jobs"])
    r.job(j["id"]);

  auto v = validate(c.dir, r.answers);
  INFO(v.out, v.err);
  CHECK(v.exit_code == 0);
  CHECK(v.out == fmt::format("{} answers valid\n", r.answers.size()));
}

TEST_CASE("a library's driver runs as an application over REST, as Flink's "
          "jars do") {
  rest_cluster c;
  recorder r{c.url};
  c.add_worker("tm-1", 2);
  auto up = upload(c.url, "libweir_test_drivers.so",
                   read_file(test_plugin("drivers")));
  REQUIRE(up.status == 200);
  r.keep("POST", "/jars/upload", up);
  std::string jar = up.body["filename"];
  auto list = r.get("/jars").body;
  REQUIRE(list["files"].size() == 1);
  CHECK(list["files"][0]["id"] == jar);
  CHECK(list["files"][0]["name"] == "libweir_test_drivers.so");
  CHECK(list["address"] == c.url);

  // Its plan is the driver job's: the jobs it submits are built as it runs.
  auto plan = r.post("/jars/" + jar + "/plan", {{"entryClass", "returns_status"}});
  REQUIRE(plan.status == 200);
  REQUIRE(plan.body["plan"]["nodes"].size() == 2);
  CHECK(plan.body["plan"]["nodes"][0]["operator"] == "weir.driver");
  CHECK(plan.body["plan"]["name"] == "driver returns_status");
  CHECK(r.get("/jars/" + jar + "/plan?entry-class=returns_status").status
        == 200);

  // entryClass names the driver (weir run -c); the arguments are its own.
  auto ok = r.post("/jars/" + jar + "/run",
                   {{"entryClass", "returns_status"},
                    {"programArgsList", {"0"}}});
  REQUIRE(ok.status == 200);
  std::string app = ok.body["jobid"];
  CHECK(c.client({"wait", app}).exit_code == 0);
  CHECK(weir::test::get(c.url, "/jobs/" + app).body["name"]
        == "driver returns_status");
  // Flink's programArgs string; a driver's own status fails it.
  auto seven = r.post("/jars/" + jar + "/run",
                      {{"entryClass", "returns_status"}, {"programArgs", "7"}});
  REQUIRE(seven.status == 200);
  auto failed = c.client({"wait", seven.body["jobid"]});
  CHECK(failed.exit_code == 7);
  auto missing = weir::test::post(c.url, "/jars/" + jar + "/run",
                                  {{"programArgsList", {"0"}}});
  CHECK(missing.status == 400);
  CHECK(missing.body
        == errors("field 'entryClass' must name the library's driver, as "
                  "weir run -c does (a library has no manifest to name it)"));
  CHECK(weir::test::post(c.url, "/jars/nope.so/run",
                         {{"entryClass", "returns_status"}})
          .status
        == 404);
  r.job(app);

  // Deleted, it is gone from the list.
  auto gone = rest_client(c.url).Delete("/jars/" + jar);
  REQUIRE(gone);
  CHECK(gone->status == 200);
  CHECK(r.get("/jars").body["files"] == json::array());

  auto v = validate(c.dir, r.answers);
  INFO(v.out, v.err);
  CHECK(v.exit_code == 0);
}

TEST_CASE("the processes' logs over REST; DELETE /cluster stops it") {
  temp_dir dir;
  auto log = dir.file("jm.log");
  running_process jm{{std::getenv("WEIR_BIN"), "jobmanager", "--port", "0",
                      "-Drest.port=0", "--state-dir", dir.file("state"),
                      "--log", log}};
  // Its event log goes to the file, the REST API's URL and its port too.
  std::string url, port;
  REQUIRE(eventually([&] {
    std::smatch m;
    auto text = read_file(log);
    if (!std::regex_search(text, m,
                           std::regex{"listening on [0-9.]+:([0-9]+), .*"
                                      "REST API at (http://[0-9.]+:[0-9]+)"}))
      return false;
    port = m[1];
    url = m[2];
    return true;
  }));
  recorder r{url};
  auto logs = r.get("/jobmanager/logs").body["logs"];
  REQUIRE(logs.size() == 1);
  CHECK(logs[0]["name"] == "jm.log");
  CHECK(logs[0]["size"].get<int64_t>() > 0);
  for (auto path : {"/jobmanager/logs/jm.log", "/jobmanager/log"}) {
    auto file = rest_get(url, path);
    REQUIRE(file);
    CHECK(file->status == 200);
    CHECK(file->body.find("REST API at " + url) != std::string::npos);
  }
  CHECK(rest_get(url, "/jobmanager/logs/other.log")->status == 404);

  // A taskmanager's log is read on its host, through the ResourceManager;
  // one that logs to stderr has none.
  auto tm_log = dir.file("tm.log");
  running_process tm{{std::getenv("WEIR_BIN"), "taskmanager", "-m",
                      "127.0.0.1:" + port, "--id", "tm-logged", "--log",
                      tm_log}};
  running_process quiet{{std::getenv("WEIR_BIN"), "taskmanager", "-m",
                         "127.0.0.1:" + port, "--id", "tm-quiet"}};
  REQUIRE(eventually(
    [&] { return r.get("/taskmanagers").body["taskmanagers"].size() == 2; }));
  std::string logged_id;
  auto tms = r.get("/taskmanagers").body;
  for (auto& t : tms["taskmanagers"])
    if (t["weir-name"] == "tm-logged")
      logged_id = t["id"];
  REQUIRE(logged_id.size() == 32);
  auto tm_logs = r.get("/taskmanagers/" + logged_id + "/logs").body["logs"];
  REQUIRE(tm_logs.size() == 1);
  CHECK(tm_logs[0]["name"] == "tm.log");
  CHECK(tm_logs[0]["size"].get<int64_t>() == static_cast<int64_t>(
          read_file(tm_log).size()));
  for (auto path : {"/logs/tm.log", "/log"}) {
    auto file = rest_get(url, "/taskmanagers/" + logged_id + path);
    REQUIRE(file);
    CHECK(file->status == 200);
    CHECK(file->body.find("registering with the jobmanager")
          != std::string::npos);
    // What the file held when it was read: the log only grows.
    CHECK(read_file(tm_log).rfind(file->body, 0) == 0);
  }
  CHECK(r.get("/taskmanagers/tm-quiet/logs").body["logs"] == json::array());
  auto none = rest_get(url, "/taskmanagers/tm-quiet/log");
  CHECK(none->status == 404);
  CHECK(json::parse(none->body)["errors"][0]
        == "no log file: the process logs to stderr (start it with --log "
           "FILE)");
  auto other = rest_get(url, "/taskmanagers/" + logged_id + "/logs/jm.log");
  CHECK(other->status == 404);
  CHECK(json::parse(other->body)["errors"][0]
        == "no log file 'jm.log' (GET /taskmanagers/" + logged_id
             + "/logs lists them)");
  CHECK(rest_get(url, "/taskmanagers/nope/logs")->status == 404);

  auto stop = rest_client(url).Delete("/cluster");
  REQUIRE(stop);
  CHECK(stop->status == 200);
  CHECK(stop->body == "{}");
  CHECK(jm.finish(30s).exit_code == 0);

  auto v = validate(dir, r.answers);
  INFO(v.out, v.err);
  CHECK(v.exit_code == 0);
}

TEST_CASE("the documented coverage names every operation of Flink's spec") {
  // Every GET it calls served was validated by the test cases above; every
  // other operation answers 404.
  auto coverage = documented_coverage();
  auto ops = spec_operations();
  CHECK(coverage.size() == ops.size());
  rest_cluster c;
  c.add_worker("tm-1", 1);
  REQUIRE(c.client({"run", "examples/collect.json", "--to", "4"}).exit_code == 0);
  auto jobs = weir::test::get(c.url, "/jobs").body;
  std::string finished = jobs["jobs"][0]["id"];
  auto vertex = weir::test::get(c.url, "/jobs/" + finished)
                  .body["vertices"][0]["id"]
                  .get<std::string>();
  for (auto& op : ops) {
    CAPTURE(op);
    REQUIRE(coverage.count(op) == 1);
    auto space = op.find(' ');
    auto method = op.substr(0, space), templ = op.substr(space + 1);
    bool served = coverage[op].rfind("served", 0) == 0;
    if (served && method == "GET") {
      auto pattern = path_pattern(templ);
      bool seen = false;
      for (auto& a : all_answers)
        seen = seen
               || (a["method"] == "GET"
                   && std::regex_match(a["path"].get<std::string>(), pattern));
      CHECK(seen);
    } else if (!served) {
      auto path = std::regex_replace(templ, std::regex{"\\{jobid\\}"}, finished);
      path = std::regex_replace(path, std::regex{"\\{vertexid\\}"}, vertex);
      path = std::regex_replace(path, std::regex{R"(\{[^}]+\})"}, "1");
      httplib::Client http{c.url};
      httplib::Result res = method == "GET"    ? http.Get(path)
                            : method == "POST" ? http.Post(path, "{}", "application/json")
                            : method == "PATCH" ? http.Patch(path, "", "application/json")
                                                : http.Delete(path);
      REQUIRE(res);
      CHECK_MESSAGE(res->status == 404, path);
    }
  }
}
