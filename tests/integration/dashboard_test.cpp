// The web dashboard (docs/operations.md § Web dashboard) in headless
// Chromium, against a session cluster running an unbounded job: the
// overview and the job's page as the browser built them, and a screenshot
// of the job's page kept as a test artefact.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>
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

const std::string chromium_bin = "/usr/bin/chromium";

/// Six vertices, a fan-out and three kinds of edges; runs until canceled.
/// Event time is the generator's value in ms (1970, moving 2 s a second).
const char* clickstream = R"({
  "name": "clickstream", "parallelism": 2,
  "vertices": [
    {"id": "events", "operator": "generator", "params": {"rate": 2000, "keys": 50},
     "watermarks": {"field": "value", "strategy": "monotonous"}},
    {"id": "large", "operator": "filter",
     "params": {"function": "greater_than", "threshold": 500}},
    {"id": "maxima", "operator": "max"},
    {"id": "squares", "operator": "map", "params": {"function": "square"}},
    {"id": "audit", "operator": "discard", "parallelism": 1},
    {"id": "out", "operator": "discard", "parallelism": 1}],
  "edges": [
    {"from": "events", "to": "large", "partitioning": "forward"},
    {"from": "large", "to": "maxima", "partitioning": "hash"},
    {"from": "maxima", "to": "squares", "partitioning": "forward"},
    {"from": "squares", "to": "out", "partitioning": "rebalance"},
    {"from": "large", "to": "audit", "partitioning": "broadcast"}]})";

/// Headless Chromium on `url` with `what` (--dump-dom, --screenshot=...),
/// letting the page's timers and requests run for 5 s of virtual time;
/// killed after 90 s. A profile of its own, so runs never share one.
process_result chromium(const std::string& what, const std::string& url) {
  temp_dir profile;
  auto r = run_process({chromium_bin, "--headless=new", "--no-sandbox",
                      "--disable-gpu", "--disable-dev-shm-usage",
                      "--no-first-run", "--no-default-browser-check",
                      "--user-data-dir=" + profile.path(),
                      "--window-size=1400,900", "--hide-scrollbars",
                      "--virtual-time-budget=5000", what, url},
                     90s);
  if (r.exit_code != 0) // its log is long: the end says why
    MESSAGE("chromium failed: " << r.err.substr(r.err.size() - std::min<size_t>(
                                     r.err.size(), 2000)));
  return r;
}

/// A screenshot of `url` as artefact `name`; its path.
std::string screenshot(const std::string& name, const std::string& url) {
  auto artifacts = std::filesystem::path{std::getenv("WEIR_ARTIFACT_DIR")};
  std::filesystem::create_directories(artifacts);
  auto png = (artifacts / name).string();
  std::filesystem::remove(png);
  auto shot = chromium("--screenshot=" + png, url);
  REQUIRE(shot.exit_code == 0);
  MESSAGE("screenshot: " << png);
  auto bytes = read_file(png);
  CHECK(bytes.rfind("\x89PNG\r\n\x1a\n", 0) == 0);
  CHECK(bytes.size() > 20000);
  return png;
}

/// The opening tag of the first element with attribute `attr` ("" if none).
std::string tag_with(const std::string& dom, const std::string& attr) {
  auto at = dom.find(attr);
  if (at == std::string::npos)
    return {};
  auto open = dom.rfind('<', at);
  return dom.substr(open, dom.find('>', at) - open + 1);
}

/// The text right after the tag of the element with attribute `attr`.
std::string text_of(const std::string& dom, const std::string& attr) {
  auto tag = tag_with(dom, attr);
  if (tag.empty())
    return {};
  auto from = dom.find(tag) + tag.size();
  return dom.substr(from, dom.find('<', from) - from);
}

/// The markup of the graph's node of vertex `id`, up to its </g>.
std::string vertex_node(const std::string& dom, const std::string& id) {
  auto tag = tag_with(dom, "data-vertex=\"" + id + "\"");
  if (tag.empty())
    return {};
  auto from = dom.find(tag);
  return dom.substr(from, dom.find("</g>", from) - from);
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

} // namespace

TEST_CASE("the dashboard shows a running job's graph in headless Chromium") {
  REQUIRE_MESSAGE(exists(chromium_bin),
                  "no " << chromium_bin << ": scripts/bootstrap installs it");
  session_cluster c{{"-Drest.port=0"}};
  auto url = rest_url(*c.jobmanager);
  REQUIRE_FALSE(url.empty());
  c.add_worker("tm-1", 2);
  auto detached =
    c.client({"run", "-d", c.dir.write("clickstream.json", clickstream)});
  REQUIRE(detached.exit_code == 0);
  auto id = detached.out.substr(0, 32);
  // Loaded once every vertex runs and the source has written records.
  REQUIRE(eventually([&] {
    auto d = get(url, "/jobs/" + id).body;
    if (d["state"] != "RUNNING" || d["vertices"].size() != 6)
      return false;
    for (auto& v : d["vertices"])
      if (v["status"] != "RUNNING")
        return false;
    return d["vertices"][0]["metrics"]["write-records"] > 0;
  }));

  auto overview = chromium("--dump-dom", url + "/");
  REQUIRE(overview.exit_code == 0);
  const auto& home = overview.out;
  CHECK(text_of(home, "id=\"stat-taskmanagers\"") == "1");
  CHECK(text_of(home, "id=\"stat-jobs-running\"") == "1");
  CHECK(has(tag_with(home, "data-job=\"" + id + "\""), "clickable"));
  CHECK(has(home, ">clickstream</a>"));
  // The worker's last heartbeat, as a user reads it: a moment ago (within
  // a minute: "850 ms ago", "3s ago").
  auto heartbeat = text_of(home, "data-heartbeat=\"tm-1\"");
  CHECK_MESSAGE(std::regex_match(heartbeat,
                                 std::regex{R"(([0-9]+ ms|[0-9]|[1-5][0-9])s? ago)"}),
                heartbeat);

  auto page = chromium("--dump-dom", url + "/#/jobs/" + id);
  REQUIRE(page.exit_code == 0);
  const auto& dom = page.out;
  CHECK(text_of(dom, "id=\"job-name\"") == "clickstream");
  CHECK(text_of(dom, "id=\"job-state\"") == "RUNNING");
  REQUIRE(has(dom, "<svg class=\"graph\" id=\"job-graph\""));
  for (auto [vertex, parallelism] :
       {std::pair{"events", 2}, {"large", 2}, {"maxima", 2}, {"squares", 2},
        {"audit", 1}, {"out", 1}}) {
    CAPTURE(vertex);
    auto node = vertex_node(dom, vertex);
    REQUIRE_FALSE(node.empty());
    CHECK(has(node, fmt::format("data-parallelism=\"{}\"", parallelism)));
    CHECK(has(node, fmt::format(">{}</text>", vertex)));
    CHECK(has(node, fmt::format(">parallelism {}</text>", parallelism)));
    CHECK(has(node, ">RUNNING</text>"));
    CHECK(has(node, "records in "));
  }
  // The plan's edges, drawn between the vertices they join.
  for (auto [from, to] :
       {std::pair{"events", "large"}, {"large", "maxima"}, {"maxima", "squares"},
        {"squares", "out"}, {"large", "audit"}}) {
    CAPTURE(from);
    CAPTURE(to);
    CHECK(has(dom, fmt::format("<g class=\"edge\" data-from=\"{}\" "
                               "data-to=\"{}\"",
                               from, to)));
  }
  // Every vertex has a backpressure level from the REST API.
  CHECK_FALSE(has(dom, "data-backpressure=\"none\""));
  // The vertices' table under the graph, one row each, with the least
  // input watermark of the vertex's subtasks (a source has none).
  CHECK(has(dom, "data-vertex-row=\"maxima\""));
  const std::regex utc{R"(1970-01-01T00:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z)"};
  auto low = text_of(dom, "data-watermark=\"maxima\"");
  CHECK_MESSAGE(std::regex_match(low, utc), low);
  CHECK(text_of(dom, "data-watermark=\"events\"") == "No watermark");
  // The Watermarks tab: each subtask of the chosen vertex.
  auto tab = chromium("--dump-dom", url + "/#/jobs/" + id + "/watermarks/squares");
  REQUIRE(tab.exit_code == 0);
  for (auto subtask : {"squares/0", "squares/1"}) {
    CAPTURE(subtask);
    auto row = tag_with(tab.out, fmt::format("data-subtask-watermark=\"{}\"", subtask));
    REQUIRE_FALSE(row.empty());
    auto from = tab.out.find(row);
    auto cells = tab.out.substr(from, tab.out.find("</tr>", from) - from);
    CHECK_MESSAGE(std::regex_search(cells, utc), cells);
  }

  screenshot("dashboard-job.png", url + "/#/jobs/" + id);
  screenshot("dashboard-overview.png", url + "/");

  REQUIRE(c.client({"cancel", id}).exit_code == 0);
}

TEST_CASE("the dashboard's files come from the binary; unknown ones are 404") {
  session_cluster c{{"-Drest.port=0"}};
  auto url = rest_url(*c.jobmanager);
  REQUIRE_FALSE(url.empty());
  auto index = rest_get(url, "/");
  REQUIRE(index);
  CHECK(index->status == 200);
  CHECK(index->get_header_value("Content-Type") == "text/html; charset=utf-8");
  CHECK(index->body == read_file(source_path("rest/web/index.html")));
  auto app = rest_get(url, "/web/app.js");
  REQUIRE(app);
  CHECK(app->get_header_value("Content-Type")
        == "text/javascript; charset=utf-8");
  CHECK(app->get_header_value("Cache-Control") == "no-cache");
  CHECK(app->body == read_file(source_path("rest/web/app.js")));
  // Asked again with its ETag: not modified, no body.
  auto again = rest_get(url, "/web/app.js",
                        {{"If-None-Match", app->get_header_value("ETag")}});
  REQUIRE(again);
  CHECK(again->status == 304);
  CHECK(again->body.empty());
  auto missing = rest_get(url, "/web/nothing.js");
  REQUIRE(missing);
  CHECK(missing->status == 404);
  CHECK(json::parse(missing->body)
        == json{{"errors", {"Not found: /web/nothing.js"}}});
}
