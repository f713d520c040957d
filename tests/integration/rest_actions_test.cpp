// The REST API's write endpoints on a session cluster of real processes:
// cancel, savepoint and stop (Flink's paths, bodies and statuses), a job
// resumed from the REST savepoint with exact results, and every error.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <string>

#include "cluster_fixture.hpp"
#include "process.hpp"
#include "rest_client.hpp"

using namespace weir::test;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

/// generator (`count`: -1 unbounded, 5 keys) → count → exactly-once
/// text_file directory `out`, parallelism 2, checkpoints every 200 ms.
json counts_spec(const std::string& name, int count, int rate,
                 const std::string& out) {
  return json{
    {"name", name},
    {"parallelism", 2},
    {"config", {{"execution.checkpointing.interval", "200 ms"}}},
    {"vertices",
     {{{"id", "events"},
       {"operator", "generator"},
       {"params", {{"count", count}, {"rate", rate}, {"keys", 5}}}},
      {{"id", "counts"}, {"operator", "count"}},
      {{"id", "out"},
       {"operator", "text_file"},
       {"params", {{"path", out}, {"delivery", "exactly-once"}}}}}},
    {"edges",
     {{{"from", "events"}, {"to", "counts"}, {"partitioning", "hash"}},
      {{"from", "counts"}, {"to", "out"}, {"partitioning", "forward"}}}}};
}

/// The last count of every key in committed keyed-count output.
std::map<std::string, int64_t> last_counts(const std::string& dir) {
  std::map<std::string, int64_t> result;
  for (auto& l : committed_lines(dir)) {
    auto tab = l.find('\t');
    auto& v = result[l.substr(0, tab)];
    v = std::max<int64_t>(v, std::stoll(l.substr(tab + 1)));
  }
  return result;
}

/// Submits over REST; the job id.
std::string submit(const std::string& url, const json& request) {
  auto r = post(url, "/jobs", request);
  INFO(r.body.dump());
  REQUIRE(r.status == 202);
  std::string id = r.body["jobid"];
  CHECK(r.body["jobUrl"] == "/jobs/" + id);
  return id;
}

std::string state_of(const std::string& url, const std::string& id) {
  return get(url, "/jobs/" + id).body["state"];
}

/// Polls operation `tid` of job `id` until it completed; its body.
json completed(const std::string& url, const std::string& id,
               const std::string& tid) {
  json s;
  REQUIRE(eventually([&] {
    auto a = get(url, "/jobs/" + id + "/savepoints/" + tid);
    REQUIRE(a.status == 200);
    s = a.body;
    return s["status"]["id"] == "COMPLETED";
  }));
  return s;
}

} // namespace

TEST_CASE("PATCH cancels a running job; cancel errors are 400, 404, 409") {
  rest_cluster c;
  c.add_worker("tm-1", 4);
  auto id = submit(c.url, {{"spec", counts_spec("endless", -1, 1000,
                                                c.dir.file("out"))}});
  REQUIRE(eventually([&] { return state_of(c.url, id) == "RUNNING"; }));

  auto stop_mode = patch(c.url, "/jobs/" + id + "?mode=stop");
  CHECK(stop_mode.status == 400);
  CHECK(stop_mode.body == errors("termination mode 'stop' was removed (as in "
                                 "Flink): use POST /jobs/{jobid}/stop"));
  auto bad_mode = patch(c.url, "/jobs/" + id + "?mode=halt");
  CHECK(bad_mode.status == 400);
  CHECK(bad_mode.body == errors("unknown termination mode 'halt' (expected "
                                "cancel)"));
  CHECK(state_of(c.url, id) == "RUNNING");

  auto canceled = patch(c.url, "/jobs/" + id + "?mode=cancel");
  CHECK(canceled.status == 202);
  CHECK(canceled.body == json::object());
  REQUIRE(eventually([&] { return state_of(c.url, id) == "CANCELED"; }));
  auto again = patch(c.url, "/jobs/" + id); // no mode: cancel, as in Flink
  CHECK(again.status == 409);
  CHECK(again.body == errors("job " + id + " has already reached another "
                             "terminal state (CANCELED)"));

  auto unknown = patch(c.url, "/jobs/0123456789abcdef0123456789abcdef");
  CHECK(unknown.status == 404);
  CHECK(unknown.body == errors("no job 0123456789abcdef0123456789abcdef"));
  auto malformed = patch(c.url, "/jobs/nope");
  CHECK(malformed.status == 400);
  CHECK(malformed.body == errors("malformed job id 'nope': expected 32 "
                                 "hexadecimal characters"));
  // A method without a route is an unknown path, as Flink's router says.
  auto wrong = answered(rest_client(c.url).Delete("/jobs/" + id));
  CHECK(wrong.status == 404);
  CHECK(wrong.body == errors("Not found: /jobs/" + id));
}

TEST_CASE("savepoint and stop over REST; a job resumed from it is exact") {
  rest_cluster c;
  c.add_worker("tm-1", 4);
  auto id = submit(c.url, {{"spec", counts_spec("endless", -1, 1000,
                                                c.dir.file("first"))}});
  REQUIRE(c.jobmanager->wait_for_stderr("(endless) completed checkpoint 2 ",
                                        30s));

  auto sp = post(c.url, "/jobs/" + id + "/savepoints",
                 {{"target-directory", c.dir.file("savepoints")},
                  {"cancel-job", false}});
  REQUIRE(sp.status == 202);
  std::string tid = sp.body["request-id"];
  CHECK(tid.size() == 32);
  auto done = completed(c.url, id, tid);
  std::string location = done["operation"]["location"];
  REQUIRE(location.rfind("file:/", 0) == 0); // a file: URI, as Flink's
  CHECK(location.rfind("file:" + c.dir.file("savepoints") + "/", 0) == 0);
  CHECK(std::filesystem::exists(location.substr(5)));
  CHECK(state_of(c.url, id) == "RUNNING");

  auto stop = post(c.url, "/jobs/" + id + "/stop",
                   {{"targetDirectory", "file://" + c.dir.file("stopped")},
                    {"drain", false}});
  REQUIRE(stop.status == 202);
  auto stopped = completed(c.url, id, stop.body["request-id"]);
  // The location as Flink's clients pass it on: a file: URI.
  std::string final_savepoint = stopped["operation"]["location"];
  CHECK(final_savepoint.rfind("file:" + c.dir.file("stopped") + "/", 0) == 0);
  CHECK(std::filesystem::exists(final_savepoint.substr(5)));
  REQUIRE(eventually([&] { return state_of(c.url, id) == "FINISHED"; }));
  // The first poll's answer stays.
  CHECK(get(c.url, "/jobs/" + id + "/savepoints/" + tid).body == done);

  // The same graph, now bounded (20,000 records in all), from the stop's
  // savepoint: the counts are exact.
  auto second = submit(
    c.url, {{"spec", counts_spec("bounded", 20000, 0, c.dir.file("second"))},
            {"config", {{"execution.savepoint.path", final_savepoint}}}});
  REQUIRE(eventually([&] { return state_of(c.url, second) == "FINISHED"; }));
  CHECK(c.jobmanager->wait_for_stderr("(bounded) starts from savepoint ", 30s));
  std::map<std::string, int64_t> expected;
  for (int k = 0; k < 5; ++k)
    expected[fmt::format("key-{}", k)] = 4000;
  CHECK(last_counts(c.dir.file("second")) == expected);
}

TEST_CASE("savepoint errors: 400 for the request, 404 for job and trigger") {
  rest_cluster c;
  c.add_worker("tm-1", 4);
  auto unknown_job = "/jobs/0123456789abcdef0123456789abcdef";
  auto sp = [&](const std::string& job, const std::string& body) {
    return post_text(c.url, job + "/savepoints", body);
  };
  auto relative = sp(unknown_job, R"({"target-directory": "sp"})");
  CHECK(relative.status == 400);
  CHECK(relative.body == errors("field 'target-directory': 'sp' is not an "
                                "absolute path"));
  auto not_bool = sp(unknown_job, R"({"target-directory": "/sp", "cancel-job": 1})");
  CHECK(not_bool.status == 400);
  CHECK(not_bool.body == errors("field 'cancel-job' must be true or false, "
                                "not number"));
  auto bad_json = sp(unknown_job, "{target");
  CHECK(bad_json.status == 400);
  CHECK(bad_json.body
        == errors("the request body is not JSON: parse error at line 1, "
                  "column 3: syntax error while parsing object key - invalid "
                  "literal; last read: '{ta'; expected string literal"));
  auto array = post_text(c.url, std::string{unknown_job} + "/stop", "[]");
  CHECK(array.status == 400);
  CHECK(array.body == errors("the request body must be a JSON object, not "
                             "array"));
  auto unknown = sp(unknown_job, R"({"target-directory": "/sp"})");
  CHECK(unknown.status == 404);
  CHECK(unknown.body == errors("no job 0123456789abcdef0123456789abcdef"));
  auto malformed = sp("/jobs/xyz", R"({"target-directory": "/sp"})");
  CHECK(malformed.status == 400);
  auto trigger = get(c.url, std::string{unknown_job} + "/savepoints/abc");
  CHECK(trigger.status == 404);
  CHECK(trigger.body == errors("no savepoint operation abc of job "
                               "0123456789abcdef0123456789abcdef"));
}

TEST_CASE("a savepoint of a job that ended fails in its operation") {
  rest_cluster c{{"-Dexecution.checkpointing.savepoint-dir=/unused"}};
  c.add_worker("tm-1", 4);
  auto id = submit(c.url, {{"spec", counts_spec("short", 100, 0,
                                                c.dir.file("out"))}});
  REQUIRE(eventually([&] { return state_of(c.url, id) == "FINISHED"; }));
  // The configured directory stands in for the body's.
  auto sp = post_text(c.url, "/jobs/" + id + "/savepoints", "");
  REQUIRE(sp.status == 202);
  auto done = completed(c.url, id, sp.body["request-id"]);
  INFO(done.dump());
  CHECK(done["operation"]["failure-cause"]["class"] == "weir.error");
  CHECK_FALSE(done["operation"]["failure-cause"]["stack-trace"]
                .get<std::string>()
                .empty());
  CHECK_FALSE(done["operation"].contains("location"));
}
