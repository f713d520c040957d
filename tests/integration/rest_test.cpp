// The jobmanager's REST API (docs/operations.md § REST API) over HTTP, on a
// session cluster of real processes: Flink's v1 paths and field names.
#include <doctest/doctest.h>

#include <map>
#include <regex>
#include <string>

#include <signal.h>

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

/// Whether `id` is in Flink's form of ids: 32 hexadecimal characters.
bool is_vertex_id(const json& id) {
  return id.is_string()
         && std::regex_match(id.get<std::string>(), std::regex{"[0-9a-f]{32}"});
}

/// Whether `list` has `n` entries, each RUNNING with some `records` in
/// its metrics.
bool all_running(const json& list, size_t n, const char* records) {
  if (list.size() != n)
    return false;
  for (auto& x : list)
    if (x["status"] != "RUNNING" || x["metrics"][records] == 0)
      return false;
  return true;
}

} // namespace

TEST_CASE("the REST API answers for a cluster and a finished job") {
  rest_cluster c;
  const auto& url = c.url;
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
                           {"flink-commit", empty.body["flink-commit"]},
                           {"weir-version", WEIR_VERSION}});
  CHECK(empty.body["flink-commit"].is_string());
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
  struct expected {
    const char* id;
    int in, out;
  };
  std::vector<expected> want{{"numbers", 10, 10}, {"even", 10, 5},
                             {"result", 5, 5}};
  REQUIRE(d["vertices"].size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    auto& v = d["vertices"][i];
    CAPTURE(want[i].id);
    CHECK(is_vertex_id(v["id"]));
    CHECK(v["name"] == want[i].id);
    CHECK(v["status"] == "FINISHED");
    CHECK(v["parallelism"] == 1);
    CHECK(v["metrics"]["read-records"] == want[i].in);
    CHECK(v["metrics"]["write-records"] == want[i].out);
  }
  CHECK(d["plan"]["nodes"].size() == 3);
  CHECK(d["plan"]["nodes"][1]["inputs"][0]["id"] == d["vertices"][0]["id"]);

  auto result = get(url, "/jobs/" + id + "/execution-result").body;
  CHECK(result["status"]["id"] == "COMPLETED");
  CHECK(result["job-execution-result"]["id"] == id);
  CHECK(result["job-execution-result"]["application-status"] == "SUCCEEDED");
  CHECK(result["job-execution-result"]["net-runtime"] == end - start);
  auto exceptions = get(url, "/jobs/" + id + "/exceptions").body;
  CHECK(exceptions["root-exception"].is_null());
  CHECK(exceptions["exceptionHistory"]["entries"] == json::array());
}

TEST_CASE("REST errors: unknown job, malformed id, unknown path") {
  rest_cluster c;
  const auto& url = c.url;
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
  rest_cluster c;
  const auto& url = c.url;
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
    return all_running(d["vertices"], 2, "write-records");
  }));
  CHECK(d["state"] == "RUNNING");
  CHECK(d["end-time"] == -1);
  CHECK(d["vertices"][0]["name"] == "events");
  CHECK(d["vertices"][0]["parallelism"] == 2);
  CHECK(d["vertices"][1]["name"] == "sink");
  CHECK(d["vertices"][1]["parallelism"] == 2);
  // Its key groups: Flink's default for parallelism 2.
  CHECK(d["vertices"][1]["maxParallelism"] == 128);
  CHECK(d["maxParallelism"] == 128);
  auto j = get(url, "/jobs/overview").body["jobs"][0];
  CHECK(j["state"] == "RUNNING");
  CHECK(j["end-time"] == -1);
  CHECK(j["tasks"] == json{{"total", 4}, {"created", 0}, {"scheduled", 0},
                           {"deploying", 0}, {"running", 4}, {"finished", 0},
                           {"canceling", 0}, {"canceled", 0}, {"failed", 0},
                           {"reconciling", 0}, {"initializing", 0}});
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
    CHECK(v["parallelism"] == 2);
  }
  CHECK(get(url, "/overview").body["jobs-cancelled"] == 1);
}

TEST_CASE("a running job's plan, subtasks, checkpoints and config over REST") {
  rest_cluster c;
  const auto& url = c.url;
  c.add_worker("tm-1", 2);
  auto stream = c.dir.write("stream.json", checkpointed_stream_spec);
  auto detached = c.client({"run", "-d", stream});
  REQUIRE(detached.exit_code == 0);
  auto id = detached.out.substr(0, 32);
  auto job = "/jobs/" + id;

  json cp;
  REQUIRE(eventually([&] {
    cp = get(url, job + "/checkpoints").body;
    return cp["counts"]["completed"] >= 2;
  }));
  int64_t completed = cp["counts"]["completed"];
  CHECK(cp["counts"]["total"] >= completed);
  CHECK(cp["counts"]["failed"] == 0);
  auto& latest = cp["latest"]["completed"];
  CHECK(latest["status"] == "COMPLETED");
  CHECK(latest["is_savepoint"] == false);
  CHECK(latest["num_subtasks"] == 4);
  CHECK(latest["num_acknowledged_subtasks"] == 4);
  CHECK(latest["end_to_end_duration"] >= 0);
  CHECK(latest["state_size"] >= 0);
  CHECK(latest["latest_ack_timestamp"] >= latest["trigger_timestamp"]);
  REQUIRE(cp["history"].size() >= 2);
  CHECK(cp["history"][0]["id"] > cp["history"][1]["id"]); // newest first

  auto plan = get(url, job + "/plan").body["plan"];
  CHECK(plan["jid"] == id);
  REQUIRE(plan["nodes"].size() == 2);
  auto events = get(url, job).body["vertices"][0]["id"].get<std::string>();
  CHECK(plan["nodes"][0]["id"] == events);
  CHECK(plan["nodes"][0]["parallelism"] == 2);
  CHECK(plan["nodes"][1]["inputs"]
        == json::array({{{"num", 0},
                         {"id", events},
                         {"ship_strategy", "REBALANCE"},
                         {"exchange", "pipelined_bounded"}}}));

  json sink;
  REQUIRE(eventually([&] {
    sink = get(url, job + "/vertices/sink").body;
    return all_running(sink["subtasks"], 2, "read-records");
  }));
  CHECK(is_vertex_id(sink["id"]));
  CHECK(sink["name"] == "sink");
  // Flink's id names the vertex as well as weir's name does.
  CHECK(get(url, job + "/vertices/" + sink["id"].get<std::string>())
          .body["name"]
        == "sink");
  CHECK(sink["parallelism"] == 2);
  for (int i = 0; i < 2; ++i) {
    auto& t = sink["subtasks"][i];
    CHECK(t["subtask"] == i);
    CHECK(t["attempt"] == 0);
    CHECK(t["host"] == "tm-1");
    CHECK(is_vertex_id(t["taskmanager-id"])); // Flink's 32-hex form
    CHECK(t["start-time"] > 0);
    CHECK(t["end-time"] == -1);
    CHECK(t["duration"] >= 0);
  }
  auto bp = get(url, job + "/vertices/events/backpressure");
  CHECK(bp.status == 200);
  CHECK(bp.body["status"] == "ok");
  CHECK(bp.body["subtasks"].size() == 2);
  auto unknown = get(url, job + "/vertices/nope");
  CHECK(unknown.status == 404);
  CHECK(unknown.body == errors("job " + id + " has no vertex 'nope'"));

  auto config = get(url, job + "/config").body;
  CHECK(config["jid"] == id);
  CHECK(config["name"] == "checkpointed");
  CHECK(config["execution-config"]["job-parallelism"] == 2);
  CHECK(config["execution-config"]["user-config"]
        == json{{"execution.checkpointing.interval", "100 ms"}});
  CHECK(get(url, job + "/execution-result").body
        == json{{"status", {{"id", "IN_PROGRESS"}}}});

  // What the JobMaster knew stays visible once the job ended.
  REQUIRE(c.client({"cancel", id}).exit_code == 0);
  REQUIRE(eventually([&] {
    return get(url, job).body["state"] == "CANCELED";
  }));
  auto after = get(url, job + "/checkpoints").body;
  CHECK(after["counts"]["completed"] >= completed);
  CHECK(after["counts"]["in_progress"] == 0);
  CHECK(get(url, job + "/execution-result")
          .body["job-execution-result"]["application-status"]
        == "CANCELED");
}

TEST_CASE("a failed job's exceptions name the cause, subtask and worker") {
  rest_cluster c;
  const auto& url = c.url;
  c.add_worker("tm-1", 1);
  auto input = c.dir.write("input.txt", "1\nx\n");
  auto spec = c.dir.write("throws.json", throws_once_spec(input));
  auto r = c.client({"run", spec, "--libjars", test_plugin("faults")});
  CHECK(r.exit_code == 1);
  // The restart's cause was printed as it happened (stderr is no terminal).
  CHECK(r.err.find("weir run: restart 1 in 10 ms after a failure of parse "
                   "(1/1) on tm-1: vertex 'parse' (operator 'throws', subtask "
                   "1/1) threw std::invalid_argument: stoll\n")
        != std::string::npos);
  auto id = get(url, "/jobs").body["jobs"][0]["id"].get<std::string>();
  auto e = get(url, "/jobs/" + id + "/exceptions").body;
  std::string thrown = "vertex 'parse' (operator 'throws', subtask 1/1) threw "
                       "std::invalid_argument: stoll";
  auto& entries = e["exceptionHistory"]["entries"];
  REQUIRE(entries.size() == 2); // the restart's cause, then the final one
  for (auto& entry : entries) {
    CHECK(entry["stacktrace"].get<std::string>().find(thrown)
          != std::string::npos);
    CHECK(entry["taskName"] == "parse (1/1)");
    CHECK(entry["location"] == "tm-1");
    CHECK(entry["timestamp"] > 0);
  }
  CHECK(e["root-exception"] == entries[0]["stacktrace"]);
  auto result = get(url, "/jobs/" + id + "/execution-result").body;
  CHECK(result["job-execution-result"]["application-status"] == "FAILED");
  CHECK(result["job-execution-result"]["failure-cause"]["stack-trace"]
          .get<std::string>()
          .find(thrown)
        != std::string::npos);
}

TEST_CASE("the jobmanager's configuration and the dashboard's") {
  rest_cluster c{{"-Dheartbeat.timeout=7 s"}};
  const auto& url = c.url;
  auto list = get(url, "/jobmanager/config").body;
  REQUIRE(list.is_array());
  auto value_of = [&](const std::string& key) -> json {
    for (auto& e : list)
      if (e["key"] == key)
        return e["value"];
    return nullptr;
  };
  CHECK(value_of("heartbeat.timeout") == "7 s");
  CHECK(value_of("rest.port") == "0");
  CHECK(value_of("heartbeat.interval") == "500 ms"); // a default
  auto config = get(url, "/config").body;
  CHECK(config["weir-version"] == WEIR_VERSION);
  CHECK(config["refresh-interval"] == 2000);
}

TEST_CASE("bytes that are not UTF-8 in a path are answered, and the "
          "jobmanager keeps serving") {
  rest_cluster c;
  const auto& url = c.url;
  auto tm = get(url, "/taskmanagers/%ff%fe");
  CHECK(tm.status == 404);
  CHECK(tm.body == errors("TaskManager \xef\xbf\xbd\xef\xbf\xbd does not "
                          "exist"));
  auto job = get(url, "/jobs/%ff");
  CHECK(job.status == 400);
  CHECK(job.body
        == errors("malformed job id '\xef\xbf\xbd': expected 32 hexadecimal "
                  "characters"));
  auto path = get(url, "/no/%c3%28");
  CHECK(path.status == 404);
  CHECK(path.body == errors("Not found: /no/\xef\xbf\xbd("));
  CHECK(get(url, "/overview").status == 200); // still serving
  CHECK(::kill(c.jobmanager->pid(), 0) == 0);
}


TEST_CASE("request bodies: none without a length, no chunked or compressed "
          "ones, no writes from another origin") {
  rest_cluster c;
  const auto& url = c.url;
  auto host = url.substr(std::string{"http://"}.size());
  auto job = std::string{"/jobs/0123456789abcdef0123456789abcdef"};
  // curl -X PATCH sends no Content-Length: the request has no body and is
  // answered at once (before, the server waited for one).
  auto cancel = raw_exchange(url, "PATCH " + job + "?mode=cancel HTTP/1.1\r\n"
                                  "Host: " + host + "\r\nConnection: close\r\n\r\n");
  CHECK(cancel.rfind("HTTP/1.1 404", 0) == 0);
  CHECK(cancel.find("no job 0123456789abcdef0123456789abcdef") != std::string::npos);
  auto chunked = raw_exchange(url, "POST /jobs HTTP/1.1\r\nHost: " + host
                                   + "\r\nTransfer-Encoding: chunked\r\n"
                                     "Connection: close\r\n\r\n5\r\nhello\r\n0\r\n\r\n");
  CHECK(chunked.rfind("HTTP/1.1 411", 0) == 0);
  auto gzip = raw_exchange(url, "POST /jobs HTTP/1.1\r\nHost: " + host
                                + "\r\nContent-Encoding: gzip\r\nContent-Length: 2\r\n"
                                  "Connection: close\r\n\r\n{}");
  CHECK(gzip.rfind("HTTP/1.1 415", 0) == 0);
  auto other = raw_exchange(url, "PATCH " + job + " HTTP/1.1\r\nHost: " + host
                                 + "\r\nOrigin: http://evil.example\r\n"
                                   "Connection: close\r\n\r\n");
  CHECK(other.rfind("HTTP/1.1 403", 0) == 0);
  CHECK(other.find("a request from another origin (http://evil.example) may "
                   "not change anything")
        != std::string::npos);
  auto own = raw_exchange(url, "PATCH " + job + " HTTP/1.1\r\nHost: " + host
                               + "\r\nOrigin: http://" + host
                               + "\r\nConnection: close\r\n\r\n");
  CHECK(own.rfind("HTTP/1.1 404", 0) == 0); // the dashboard's own writes
}

namespace {

/// A connection to the REST API at `url` that sent the start of a request
/// head and nothing more: what a client sending one header byte every few
/// seconds looks like to the server.
int slow_head(const std::string& url) {
  int fd = connect_to_url(url);
  std::string start = "GET /overview HTTP/1.1\r\nHost: x\r\nX-Slow: ";
  CHECK(::send(fd, start.data(), start.size(), MSG_NOSIGNAL)
        == static_cast<ssize_t>(start.size()));
  return fd;
}

/// Whether the server closes `fd` within `deadline` (after an answer, a
/// 400 for the head that never came whole, or none).
bool closed_within(int fd, std::chrono::seconds deadline) {
  timeval tv{static_cast<time_t>(deadline.count()), 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  char buf[256];
  for (;;) {
    auto n = ::recv(fd, buf, sizeof(buf), 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET))
      return true;
    if (n < 0)
      return false; // the receive timeout passed
  }
}

} // namespace

TEST_CASE("slow request heads neither stop the REST API nor stay") {
  rest_cluster c;
  for (int slow : {12, 80}) {
    std::vector<int> fds;
    for (int i = 0; i < slow; ++i)
      fds.push_back(slow_head(c.url));
    auto start = std::chrono::steady_clock::now();
    auto r = rest_get(c.url, "/overview");
    auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::steady_clock::now() - start);
    REQUIRE(r);
    CHECK(r->status == 200);
    MESSAGE("GET /overview with " << slow << " slow heads open: "
            << took.count() << " ms");
    // Each is closed: made room for a newer one, or past its head's 10 s.
    for (int fd : fds) {
      CHECK(closed_within(fd, 30s));
      ::close(fd);
    }
  }
  CHECK(rest_get(c.url, "/overview")->status == 200);
}

namespace {

const char* ticking_spec = R"({
    "name": "ticking", "parallelism": 1,
    "vertices": [
      {"id": "events", "operator": "generator", "params": {"rate": 1000}},
      {"id": "sink", "operator": "discard"}],
    "edges": [{"from": "events", "to": "sink"}]})";

/// The entry of `key` in /jobs/{id}/config's weir-effective-config.
json effective(const json& config, const std::string& key) {
  for (auto& e : config["weir-effective-config"])
    if (e["key"] == key)
      return e;
  return nullptr;
}

} // namespace

TEST_CASE("-D job keys of weir run -m reach the job on a session cluster") {
  rest_cluster c{{"-Dstate.checkpoints.num-retained=2"}};
  const auto& url = c.url;
  c.add_worker("tm-1", 1);
  auto spec = c.dir.write("ticking.json", ticking_spec);
  // Before and after the spec: both are the client's.
  auto run = c.client({"run", "-Dexecution.checkpointing.interval=100 ms",
                       "-d", spec, "-Drestart-strategy.type=none"});
  REQUIRE(run.exit_code == 0);
  auto id = run.out.substr(0, 32);
  auto job = "/jobs/" + id;
  auto config = get(url, job + "/config").body;
  CHECK(config["execution-config"]["user-config"]
        == json{{"execution.checkpointing.interval", "100 ms"},
                {"restart-strategy.type", "none"}});
  CHECK(config["execution-config"]["restart-strategy"] == "none");
  CHECK(effective(config, "execution.checkpointing.interval")
        == json{{"key", "execution.checkpointing.interval"},
                {"value", "100 ms"},
                {"origin", "-Dexecution.checkpointing.interval=100 ms"}});
  CHECK(effective(config, "state.checkpoints.num-retained")["origin"]
        == "cluster: -Dstate.checkpoints.num-retained=2");
  CHECK(effective(config, "slot.request.timeout")
        == json{{"key", "slot.request.timeout"},
                {"value", "300 s"},
                {"origin", "default"}});
  // The job checkpoints as asked.
  CHECK(eventually([&] {
    return get(url, job + "/checkpoints").body["counts"]["completed"] >= 2;
  }));
  CHECK(c.client({"cancel", id}).exit_code == 0);

  // slot.request.timeout is the job's too: this one fails after 1 s.
  auto starved = c.client({"run", "examples/collect.json", "-p", "3",
                           "-Dslot.request.timeout=1 s"});
  CHECK(starved.exit_code == 1);
  CHECK(starved.err.find("could not get 3 of 3 slots within "
                         "slot.request.timeout (1 s)")
        != std::string::npos);
}

TEST_CASE("weir run -m refuses a key it cannot apply and a conflicting one") {
  rest_cluster c;
  auto spec = c.dir.write("ticking.json", R"({
    "name": "ticking", "parallelism": 1,
    "config": {"execution.checkpointing.interval": "5 s"},
    "vertices": [
      {"id": "events", "operator": "generator", "params": {"rate": 1000}},
      {"id": "sink", "operator": "discard"}],
    "edges": [{"from": "events", "to": "sink"}]})");
  auto cluster_key = c.client({"run", "-d", spec,
                               "-Dtaskmanager.numberOfTaskSlots=4"});
  CHECK(cluster_key.exit_code == 2);
  CHECK(cluster_key.err
        == "weir run: -Dtaskmanager.numberOfTaskSlots=4: "
           "'taskmanager.numberOfTaskSlots' configures the session cluster's "
           "processes, not a job; it cannot apply to a job on it (set it "
           "where the cluster starts)\n");
  auto slots = c.client({"run", "-d", spec, "--slots", "4"});
  CHECK(slots.exit_code == 2);
  CHECK(slots.err.find("weir run: --slots 4: 'taskmanager.numberOfTaskSlots' "
                       "configures the session cluster's processes")
        == 0);
  auto twice = c.client({"run", "-d", spec,
                         "-Dexecution.checkpointing.interval=2 s"});
  CHECK(twice.exit_code == 2);
  CHECK(twice.err
        == fmt::format("weir run: -Dexecution.checkpointing.interval=2 s and "
                       "spec {} ('5 s') both set "
                       "'execution.checkpointing.interval'; give one\n",
                       spec));
  // The same value twice is no conflict ("5000 ms" is "5 s").
  auto same = c.client({"run", "-d", spec,
                        "-Dexecution.checkpointing.interval=5000 ms"});
  CHECK(same.exit_code == 0);
  CHECK(get(c.url, "/jobs").body["jobs"].size() == 1);
}

TEST_CASE("across a combiner both sides of the edge count the same records") {
  rest_cluster c;
  c.add_worker("tm-1", 2);
  // numbers -> keyed (chained) -> hash -> sums: the producer's combiner
  // folds 100,000 records into at most 2 x 1000 partial sums.
  auto run = c.client({"run", "examples/keyed_sum.json", "--to", "100000",
                       "-d"});
  REQUIRE(run.exit_code == 0);
  auto id = run.out.substr(0, 32);
  REQUIRE(c.client({"wait", id}).exit_code == 0);
  auto job = get(c.url, "/jobs/" + id).body;
  std::map<std::string, json> metrics;
  for (auto& v : job["vertices"])
    metrics[v["name"].get<std::string>()] = v["metrics"];
  CHECK(metrics["numbers"]["write-records"] == 100000);
  CHECK(metrics["keyed"]["read-records"] == 100000);
  CHECK(metrics["keyed"]["weir-records-combined"] == 100000);
  auto sent = metrics["keyed"]["write-records"].get<int64_t>();
  CHECK(sent > 0);
  CHECK(sent <= 2000);
  CHECK(metrics["sums"]["read-records"] == sent);
  auto status = c.client({"status", id});
  CHECK(status.out.find(fmt::format("Vertex keyed: 100000 in, {} out "
                                    "(combined from 100000 emitted)\n",
                                    sent))
        != std::string::npos);
}
