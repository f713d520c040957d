// The REST API's bodies (rest/json): Flink's field names over job
// statuses, for jobs that run (subtasks known) and jobs that ended.
#include <doctest/doctest.h>

#include "messages/flink_ids.hpp"
#include "rest/json.hpp"

using namespace weir;
using nlohmann::json;

namespace {

job_status running_job() {
  job_status s;
  s.id = *job_id::parse("0123456789abcdef0123456789abcdef");
  s.name = "pipeline";
  s.state = job_state::running;
  s.start_time_ms = 1000;
  s.subtasks_total = 4;
  s.subtasks_running = 3;
  s.subtasks_finished = 1;
  s.metrics.vertices = {{"src", 7, 7, {}}, {"map", 7, 6, {}}, {"out", 6, 6, {}}};
  // Chains "src -> map" (parallelism 2: one finished, one running) and
  // "out" (parallelism 2, both running).
  s.subtasks = {{"src -> map", 0, 2, execution_state::finished, "tm-1"},
                {"src -> map", 1, 2, execution_state::running, "tm-2"},
                {"out", 0, 2, execution_state::running, "tm-1"},
                {"out", 1, 2, execution_state::initializing, "tm-2"}};
  s.subtasks[1].attempt = 1;
  s.subtasks[1].start_time_ms = 1100;
  s.subtasks[1].metrics.vertices = {{"src", 4, 4, {}}, {"map", 4, 3, {}}};
  s.subtasks[1].metrics.load.bytes_out = 300;
  s.subtasks[1].metrics.load.backpressured_ms_per_s = 600;
  s.subtasks[1].metrics.load.busy_ms_per_s = 300;
  s.subtasks[1].metrics.load.idle_ms_per_s = 100;
  s.subtasks[2].metrics.load.bytes_in = 280;
  return s;
}

/// Flink's IOMetricsInfo: the counts, each complete.
json io(int read_records, int write_records, int read_bytes, int write_bytes) {
  return json{{"read-records", read_records},
              {"read-records-complete", true},
              {"write-records", write_records},
              {"write-records-complete", true},
              {"read-bytes", read_bytes},
              {"read-bytes-complete", true},
              {"write-bytes", write_bytes},
              {"write-bytes-complete", true}};
}

std::string vid(const std::string& vertex) {
  return flink_vertex_id(*job_id::parse("0123456789abcdef0123456789abcdef"),
                         vertex);
}

job_graph pipeline() {
  job_graph g;
  g.name = "pipeline";
  g.vertices = {{"src", "sequence", {}, 2}, {"map", "upper", {}, 2},
                {"out", "print", {}, 2}};
  g.edges = {{"src", "map", partitioning::forward},
             {"map", "out", partitioning::hash, {"key"}}};
  return g;
}

} // namespace

TEST_CASE("a running job: end-time -1, vertices from their chains") {
  auto d = rest::job_details(running_job(), pipeline(), 1500);
  CHECK(d["end-time"] == -1);
  CHECK(d["duration"] == 500);
  CHECK(d["now"] == 1500);
  struct expected {
    const char* id;
    const char* status;
    int in, out, bytes_in, bytes_out;
  };
  std::vector<expected> want{{"src", "RUNNING", 7, 7, 0, 0},
                             {"map", "RUNNING", 7, 6, 0, 300},
                             {"out", "INITIALIZING", 6, 6, 280, 0}};
  REQUIRE(d["vertices"].size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    auto& v = d["vertices"][i];
    CAPTURE(want[i].id);
    CHECK(v["id"] == vid(want[i].id));
    CHECK(v["name"] == want[i].id);
    CHECK(v["parallelism"] == 2);
    // Key groups: the subtasks report none here, so Flink's default rule.
    CHECK(v["maxParallelism"] == 128);
    CHECK(v["status"] == want[i].status);
    CHECK(v["metrics"]
          == io(want[i].in, want[i].out, want[i].bytes_in, want[i].bytes_out));
  }
  // Vertices by state: src and map run, out initializes.
  CHECK(d["status-counts"]["RUNNING"] == 2);
  CHECK(d["status-counts"]["INITIALIZING"] == 1);
  CHECK(d["status-counts"]["FINISHED"] == 0);
  CHECK(d["timestamps"]["CREATED"] == 1000);
  CHECK(d["timestamps"]["FINISHED"] == 0);
  auto o = rest::jobs_overview({running_job()}, 1500)["jobs"][0];
  CHECK(o["tasks"] == json{{"total", 4}, {"created", 0}, {"scheduled", 0},
                           {"deploying", 0}, {"running", 2}, {"finished", 1},
                           {"canceling", 0}, {"canceled", 0}, {"failed", 0},
                           {"reconciling", 0}, {"initializing", 1}});
  CHECK(o["last-modification"] == 1000);
}

TEST_CASE("the plan: a node per vertex, inputs with Flink's ship strategies") {
  auto p = rest::plan(running_job(), pipeline());
  CHECK(p["jid"] == "0123456789abcdef0123456789abcdef");
  REQUIRE(p["nodes"].size() == 3);
  CHECK_FALSE(p["nodes"][0].contains("inputs"));
  CHECK(p["nodes"][1]["inputs"]
        == json::array({{{"num", 0},
                         {"id", vid("src")},
                         {"ship_strategy", "FORWARD"},
                         {"exchange", "pipelined_bounded"}}}));
  CHECK(p["nodes"][2]["inputs"][0]["ship_strategy"] == "HASH");
  CHECK(p["nodes"][2]["description"] == "out (print)");
  // Only a stored result left: the vertices its metrics name, no edges.
  auto bare = rest::plan(running_job(), job_graph{});
  CHECK(bare["nodes"].size() == 3);
  CHECK(bare["nodes"][1]["id"] == vid("map"));
}

TEST_CASE("a vertex's subtasks and backpressure") {
  auto v = rest::vertex_details(running_job(), pipeline(), vid("map"), 1500);
  REQUIRE(v);
  CHECK((*v)["id"] == vid("map"));
  CHECK((*v)["name"] == "map");
  // Its name names it too (weir's extension).
  CHECK(rest::vertex_details(running_job(), pipeline(), "map", 1500) == v);
  REQUIRE((*v)["subtasks"].size() == 2);
  auto& t = (*v)["subtasks"][1];
  CHECK(t["subtask"] == 1);
  CHECK(t["status"] == "RUNNING");
  CHECK(t["attempt"] == 1);
  CHECK(t["host"] == "tm-2");
  CHECK(t["taskmanager-id"] == flink_resource_id(resource_id{"tm-2"}));
  CHECK(t["duration"] == 400);
  CHECK(t["start_time"] == t["start-time"]);
  CHECK(t["metrics"] == io(4, 3, 0, 300));
  CHECK_FALSE(rest::vertex_details(running_job(), pipeline(), "nope", 1500));
  auto b = rest::backpressure(running_job(), pipeline(), "src", 1500);
  REQUIRE(b);
  CHECK((*b)["backpressure-level"] == "high");
  CHECK((*b)["subtasks"][0]["backpressure-level"] == "ok");
  CHECK((*b)["subtasks"][1]["ratio"] == 0.6);
  CHECK((*b)["subtasks"][1]["busyRatio"] == 0.3);
}

TEST_CASE("an ended job: its end, vertices and tasks ended as it did") {
  auto s = running_job();
  s.state = job_state::canceled;
  s.end_time_ms = 4000;
  s.subtasks.clear();
  auto d = rest::job_details(s, pipeline(), 9000);
  CHECK(d["end-time"] == 4000);
  CHECK(d["duration"] == 3000);
  CHECK(d["vertices"][0]["status"] == "CANCELED");
  CHECK(d["vertices"][0]["metrics"]["read-records"] == 7);
  CHECK(d["vertices"][0]["tasks"]["CANCELED"] == 2);
  CHECK(d["status-counts"]["CANCELED"] == 3);
  CHECK(d["timestamps"]["CANCELED"] == 4000);
  auto o = rest::jobs_overview({s}, 9000)["jobs"][0];
  CHECK(o["tasks"]["total"] == 4);
  CHECK(o["tasks"]["canceled"] == 4);
  CHECK(o["tasks"]["running"] == 0);
  CHECK(o["last-modification"] == 4000);
  CHECK(o["state"] == "CANCELED");
  auto r = rest::execution_result(s, 9000);
  CHECK(r["status"]["id"] == "COMPLETED");
  CHECK(r["job-execution-result"]["application-status"] == "CANCELED");
  CHECK(rest::execution_result(running_job(), 9000)
        == json{{"status", {{"id", "IN_PROGRESS"}}}});
}

TEST_CASE("checkpoint statistics and failures") {
  checkpoint_stats c;
  c.total = 3;
  c.completed = 1;
  c.failed = 1;
  c.in_progress = 1;
  c.history = {{3, "IN_PROGRESS", false, 300, 0, 0, 20, 0, 4, 1, ""},
               {2, "FAILED", false, 200, 0, 0, 50, 0, 4, 2, "expired"},
               {1, "COMPLETED", true, 100, 120, 2048, 20, 0, 4, 4, "", "/sp/s-1"}};
  c.latest_savepoint = c.history[2];
  c.latest_failed = c.history[1];
  auto j = rest::checkpoints(c);
  CHECK(j["counts"] == json{{"restored", 0},
                            {"total", 3},
                            {"in_progress", 1},
                            {"completed", 1},
                            {"failed", 1}});
  CHECK_FALSE(j["latest"].contains("completed")); // 1 is a savepoint
  CHECK_FALSE(j["latest"].contains("restored"));
  CHECK(j["latest"]["savepoint"]["id"] == 1);
  CHECK(j["latest"]["savepoint"]["external_path"] == "file:/sp/s-1");
  CHECK(j["latest"]["savepoint"]["checkpoint_type"] == "SAVEPOINT");
  CHECK(j["latest"]["failed"]["failure_message"] == "expired");
  CHECK(j["latest"]["failed"]["failure_timestamp"] == 250);
  CHECK(j["history"][2]["state_size"] == 2048);
  CHECK(j["history"][0]["num_acknowledged_subtasks"] == 1);
  // Flink's @JsonTypeInfo names of the entries' classes.
  CHECK(j["history"][0]["clazz"] == "in_progress");
  CHECK(j["history"][1]["clazz"] == "failed");
  CHECK(j["history"][2]["clazz"] == "completed");

  auto s = running_job();
  s.exceptions = {{"first", 10, "src -> map (2/2)", "tm-2"},
                  {"second", 20, "", ""}};
  auto e = rest::exceptions(s);
  CHECK(e["root-exception"] == "second");
  CHECK(e["timestamp"] == 20);
  auto& entries = e["exceptionHistory"]["entries"];
  REQUIRE(entries.size() == 2);
  CHECK(entries[0]["stacktrace"] == "second");
  CHECK_FALSE(entries[0].contains("taskName")); // the job's, as Flink
  CHECK(entries[0]["concurrentExceptions"] == json::array());
  CHECK(entries[1]["taskName"] == "src -> map (2/2)");
  CHECK(entries[1]["location"] == "tm-2");
  CHECK(entries[1]["taskManagerId"] == flink_resource_id(resource_id{"tm-2"}));
  // A job that never failed has no root cause at all, not a null one.
  auto calm = rest::exceptions(running_job());
  CHECK_FALSE(calm.contains("root-exception"));
  CHECK_FALSE(calm.contains("timestamp"));
}

TEST_CASE("the jobmanager's configuration masks secrets") {
  auto cfg = configuration::load(std::nullopt, {"rest.port=9999"});
  REQUIRE(cfg);
  auto list = rest::jobmanager_config(*cfg);
  auto value_of = [&](const std::string& key) -> json {
    for (auto& e : list)
      if (e["key"] == key)
        return e["value"];
    return nullptr;
  };
  CHECK(value_of("rest.port") == "9999");
  CHECK(value_of("heartbeat.timeout") == "3 s");
  for (auto& e : list) {
    auto key = e["key"].get<std::string>();
    if (key.find("password") != std::string::npos)
      CHECK(e["value"] == "******");
  }
}

TEST_CASE("the overview counts every job not ended as running") {
  auto a = running_job();
  auto b = running_job();
  b.state = job_state::restarting;
  auto c = running_job();
  c.state = job_state::failed;
  cluster_overview cluster{2, 8, 5, 0};
  auto o = rest::overview(cluster, {a, b, c});
  CHECK(o["taskmanagers"] == 2);
  CHECK(o["slots-total"] == 8);
  CHECK(o["slots-available"] == 5);
  CHECK(o["jobs-running"] == 2);
  CHECK(o["jobs-failed"] == 1);
  CHECK(o["jobs-finished"] == 0);
  CHECK(rest::jobs({c}) == json{{"jobs", {{{"id", c.id.to_string()},
                                           {"status", "FAILED"}}}}});
}
