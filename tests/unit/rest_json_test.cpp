// The REST API's bodies (cluster/rest_json): Flink's field names over job
// statuses, for jobs that run (subtasks known) and jobs that ended.
#include <doctest/doctest.h>

#include "cluster/rest_json.hpp"

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
  s.subtasks = {{"src -> map", 0, 2, execution_state::finished, "tm"},
                {"src -> map", 1, 2, execution_state::running, "tm"},
                {"out", 0, 2, execution_state::running, "tm"},
                {"out", 1, 2, execution_state::initializing, "tm"}};
  return s;
}

} // namespace

TEST_CASE("a running job: end-time -1, vertices from their chains") {
  auto d = rest::job_details(running_job(), 1500);
  CHECK(d["end-time"] == -1);
  CHECK(d["duration"] == 500);
  CHECK(d["now"] == 1500);
  auto vertex = [](const char* id, int p, const char* status, int in, int out) {
    return json{{"id", id},
                {"name", id},
                {"parallelism", p},
                {"status", status},
                {"metrics", {{"read-records", in}, {"write-records", out}}}};
  };
  CHECK(d["vertices"] == json::array({vertex("src", 2, "RUNNING", 7, 7),
                                      vertex("map", 2, "RUNNING", 7, 6),
                                      vertex("out", 2, "INITIALIZING", 6, 6)}));
  auto o = rest::jobs_overview({running_job()}, 1500)["jobs"][0];
  CHECK(o["tasks"] == json{{"total", 4}, {"running", 3}, {"finished", 1}});
}

TEST_CASE("an ended job: its end, vertices ended as it did, no task counts") {
  auto s = running_job();
  s.state = job_state::canceled;
  s.end_time_ms = 4000;
  s.subtasks.clear();
  auto d = rest::job_details(s, 9000);
  CHECK(d["end-time"] == 4000);
  CHECK(d["duration"] == 3000);
  CHECK(d["vertices"][0] == json{{"id", "src"},
                                 {"name", "src"},
                                 {"status", "CANCELED"},
                                 {"metrics",
                                  {{"read-records", 7}, {"write-records", 7}}}});
  auto o = rest::jobs_overview({s}, 9000)["jobs"][0];
  CHECK_FALSE(o.contains("tasks"));
  CHECK(o["state"] == "CANCELED");
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
