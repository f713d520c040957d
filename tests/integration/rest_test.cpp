// The jobmanager's REST API (docs/operations.md § REST API) over HTTP, on a
// session cluster of real processes: Flink's v1 paths and field names.
#include <doctest/doctest.h>

#include <string>

#include <httplib.h>
#include <nlohmann/json.hpp>

#include "cluster_fixture.hpp"
#include "process.hpp"
#include "rest_client.hpp"

using namespace weir::test;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

/// A GET that must be answered: the status and the JSON body.
struct answer {
  int status = 0;
  json body;
};

answer get(const std::string& url, const std::string& path) {
  auto res = rest_get(url, path);
  REQUIRE(res);
  CHECK(res->get_header_value("Content-Type") == "application/json");
  return answer{res->status, json::parse(res->body)};
}

json errors(const std::string& message) {
  return json{{"errors", {message}}};
}

} // namespace

TEST_CASE("the REST API answers for a cluster and a finished job") {
  session_cluster c{{"-Drest.port=0"}};
  auto url = rest_url(*c.jobmanager);
  REQUIRE_FALSE(url.empty());
  c.add_worker("tm-1", 2);

  auto empty = get(url, "/overview");
  CHECK(empty.status == 200);
  CHECK(empty.body == json{{"taskmanagers", 1},
                           {"slots-total", 2},
                           {"slots-available", 2},
                           {"jobs-running", 0},
                           {"jobs-finished", 0},
                           {"jobs-cancelled", 0},
                           {"jobs-failed", 0},
                           {"flink-version", WEIR_VERSION},
                           {"weir-version", WEIR_VERSION}});
  CHECK(get(url, "/jobs").body == json{{"jobs", json::array()}});

  auto run = c.client({"run", "examples/collect.json", "--to", "10"});
  REQUIRE(run.exit_code == 0);
  CHECK(run.out == "2\n4\n6\n8\n10\n");

  auto list = get(url, "/jobs");
  CHECK(list.status == 200);
  REQUIRE(list.body["jobs"].size() == 1);
  std::string id = list.body["jobs"][0]["id"];
  CHECK(list.body == json{{"jobs", {{{"id", id}, {"status", "FINISHED"}}}}});
  CHECK(c.client({"list", "-a"}).out.find(id) != std::string::npos);

  auto overview = get(url, "/overview").body;
  CHECK(overview["jobs-running"] == 0);
  CHECK(overview["jobs-finished"] == 1);
  CHECK(overview["taskmanagers"] == 1);
  CHECK(overview["slots-total"] == 2);
  // The job's slots are free again once it finished.
  CHECK(eventually([&] {
    return get(url, "/overview").body["slots-available"] == 2;
  }));

  auto jobs = get(url, "/jobs/overview").body["jobs"];
  REQUIRE(jobs.size() == 1);
  auto& j = jobs[0];
  CHECK(j["jid"] == id);
  CHECK(j["name"] == "collect");
  CHECK(j["state"] == "FINISHED");
  int64_t start = j["start-time"], end = j["end-time"];
  CHECK(start > 0);
  CHECK(end >= start);
  CHECK(j["duration"] == end - start);

  auto details = get(url, "/jobs/" + id);
  CHECK(details.status == 200);
  auto& d = details.body;
  CHECK(d["jid"] == id);
  CHECK(d["name"] == "collect");
  CHECK(d["state"] == "FINISHED");
  CHECK(d["start-time"] == start);
  CHECK(d["end-time"] == end);
  CHECK(d["duration"] == end - start);
  auto vertex = [](const std::string& v, int in, int out) {
    return json{{"id", v},
                {"name", v},
                {"status", "FINISHED"},
                {"metrics", {{"read-records", in}, {"write-records", out}}}};
  };
  CHECK(d["vertices"] == json::array({vertex("numbers", 10, 10),
                                      vertex("even", 10, 5),
                                      vertex("result", 5, 5)}));
}

TEST_CASE("REST errors: unknown job, malformed id, unknown path") {
  session_cluster c{{"-Drest.port=0"}};
  auto url = rest_url(*c.jobmanager);
  REQUIRE_FALSE(url.empty());
  auto unknown = get(url, "/jobs/0123456789abcdef0123456789abcdef");
  CHECK(unknown.status == 404);
  CHECK(unknown.body == errors("no job 0123456789abcdef0123456789abcdef"));
  auto malformed = get(url, "/jobs/not-a-job");
  CHECK(malformed.status == 400);
  CHECK(malformed.body
        == errors("malformed job id 'not-a-job': expected 32 hexadecimal "
                  "characters"));
  auto path = get(url, "/no/such/path");
  CHECK(path.status == 404);
  CHECK(path.body == errors("Not found: /no/such/path"));
}

TEST_CASE("the REST API listens on rest.bind-address only") {
  // 127.0.0.2 is loopback too (all of 127/8 is): 127.0.0.1 is another
  // address of this host, where the server must not answer.
  session_cluster c{{"-Drest.port=0", "-Drest.bind-address=127.0.0.2"}};
  auto url = rest_url(*c.jobmanager);
  REQUIRE(url.rfind("http://127.0.0.2:", 0) == 0);
  CHECK(get(url, "/jobs").status == 200);
  auto port = url.substr(url.rfind(':') + 1);
  httplib::Client other{"http://127.0.0.1:" + port};
  other.set_connection_timeout(5s);
  auto res = other.Get("/jobs");
  CHECK_FALSE(res);
  CHECK(res.error() == httplib::Error::Connection);
}

TEST_CASE("a configured REST port in use ends the jobmanager") {
  session_cluster first{{"-Drest.port=0"}};
  auto url = rest_url(*first.jobmanager);
  REQUIRE_FALSE(url.empty());
  auto port = url.substr(url.rfind(':') + 1);
  temp_dir dir;
  auto second = run_weir({"jobmanager", "--port", "0", "--state-dir",
                          dir.file("state"), "-Drest.port=" + port},
                         30s);
  CHECK(second.exit_code == 3);
  CHECK(second.err.find(fmt::format("cannot listen on 127.0.0.1:{} for the "
                                    "REST API (rest.bind-address, rest.port)\n",
                                    port))
        != std::string::npos);
}

TEST_CASE("the REST API shows a running job's vertices, then its cancel") {
  session_cluster c{{"-Drest.port=0"}};
  auto url = rest_url(*c.jobmanager);
  REQUIRE_FALSE(url.empty());
  c.add_worker("tm-1", 2);
  auto stream = c.dir.write("stream.json", R"({
    "name": "forever", "parallelism": 2,
    "vertices": [
      {"id": "events", "operator": "generator", "params": {"rate": 1000}},
      {"id": "sink", "operator": "discard"}],
    "edges": [{"from": "events", "to": "sink", "partitioning": "rebalance"}]})");
  auto detached = c.client({"run", "-d", stream});
  REQUIRE(detached.exit_code == 0);
  auto id = detached.out.substr(0, 32);

  // Running once every subtask runs and both vertices counted records.
  json d;
  REQUIRE(eventually([&] {
    d = get(url, "/jobs/" + id).body;
    if (d["vertices"].size() != 2)
      return false;
    for (auto& v : d["vertices"])
      if (v["status"] != "RUNNING" || v["metrics"]["write-records"] == 0)
        return false;
    return true;
  }));
  CHECK(d["state"] == "RUNNING");
  CHECK(d["end-time"] == -1);
  CHECK(d["vertices"][0]["id"] == "events");
  CHECK(d["vertices"][0]["parallelism"] == 2);
  CHECK(d["vertices"][1]["id"] == "sink");
  CHECK(d["vertices"][1]["parallelism"] == 2);
  auto j = get(url, "/jobs/overview").body["jobs"][0];
  CHECK(j["state"] == "RUNNING");
  CHECK(j["end-time"] == -1);
  CHECK(j["tasks"] == json{{"total", 4}, {"running", 4}, {"finished", 0}});
  auto overview = get(url, "/overview").body;
  CHECK(overview["jobs-running"] == 1);
  CHECK(overview["slots-available"] == 0);

  REQUIRE(c.client({"cancel", id}).exit_code == 0);
  REQUIRE(eventually([&] {
    return get(url, "/jobs/" + id).body["state"] == "CANCELED";
  }));
  d = get(url, "/jobs/" + id).body;
  for (auto& v : d["vertices"]) {
    CHECK(v["status"] == "CANCELED");
    CHECK_FALSE(v.contains("parallelism"));
  }
  CHECK(get(url, "/overview").body["jobs-cancelled"] == 1);
}
