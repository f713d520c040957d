// The C++ API (docs/cpp-api.md): the job builder gives the JobGraph a JSON
// spec gives; an embedded cluster in the test's own actor system runs
// lambdas and hands rows to a host actor; a job with lambdas is refused by
// a cluster in another process.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <mutex>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "api/actor_sink.hpp"
#include "api/cluster.hpp"
#include "api/job_builder.hpp"
#include "api/user_function.hpp"
#include "client/dispatcher_jobs.hpp"
#include "cluster/mini_cluster.hpp"
#include "messages/errors.hpp"
#include "plan/chaining.hpp"
#include "plan/job_spec.hpp"
#include "temp_dir.hpp"

using namespace weir;

namespace {

std::string source_path(const std::string& rel) {
  const char* root = std::getenv("WEIR_SOURCE_ROOT");
  return std::string{root != nullptr ? root : "."} + "/" + rel;
}

job_graph graph_of(const std::string& spec_json, const std::string& origin) {
  auto spec = parse_job_spec_text(spec_json, origin);
  REQUIRE_MESSAGE(spec, describe(spec.error()));
  auto g = resolve_job_graph(*spec, {});
  REQUIRE_MESSAGE(g, describe(g.error()));
  return *g;
}

std::vector<std::string> texts(const std::vector<record>& rs) {
  std::vector<std::string> out;
  for (auto& r : rs)
    out.push_back(r.key.empty() ? r.text : r.key + "=" + std::to_string(r.num));
  std::sort(out.begin(), out.end());
  return out;
}

WEIR_MAP(shout, [](record&& r) {
  for (auto& c : r.text)
    c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return std::move(r);
});

struct api_system {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  api_system() {
    prepare_actor_system(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
  }
};

/// Runs `def` on an embedded cluster of its own; checks that it finished.
job_result run_finished(const job_definition& def) {
  api_system host;
  auto cluster = embedded_cluster::start(*host.sys);
  REQUIRE(cluster);
  auto result = (*cluster)->run(def);
  REQUIRE_MESSAGE(result, describe(result.error()));
  CHECK(result->state == job_state::finished);
  return std::move(*result);
}

} // namespace

TEST_CASE("the builder's word count is the JobGraph of examples/wordcount.json") {
  job_builder job{"wordcount"};
  job.parallelism(2);
  job.read_text_file("examples/data/sample.txt").name("lines")
    .forward().flat_map("tokenize").name("words")
    .key_by().count().name("counts")
    .rebalance().write_text_file("-").name("out").parallelism(1);
  auto built = graph_of(job.build().spec_json, "builder");
  auto file = parse_job_spec(source_path("examples/wordcount.json"));
  REQUIRE(file);
  auto written = resolve_job_graph(*file, {{"input", "examples/data/sample.txt"}});
  REQUIRE(written);
  CHECK(describe_plan(built) == describe_plan(*written));
  CHECK(built.vertices == written->vertices);
  CHECK(built.edges == written->edges);
}

TEST_CASE("steps are named after their operator unless named; two alike names are refused") {
  job_builder job{"ids"};
  auto numbers = job.sequence(1, 3);
  numbers.map([](record&& r) { return std::move(r); }).collect();
  numbers.map([](record&& r) { return std::move(r); }).collect();
  auto def = job.build();
  auto g = graph_of(def.spec_json, "ids");
  std::vector<std::string> ids;
  for (auto& v : g.vertices)
    ids.push_back(v.id);
  CHECK(ids == std::vector<std::string>{"sequence", "map", "collect", "map_2",
                                        "collect_2"});
  CHECK(def.in_process_steps
        == std::vector<std::string>{"step 'map' (a map lambda)",
                                    "step 'map_2' (a map lambda)"});
  job_builder twice{"twice"};
  twice.sequence(1, 2).name("x").collect().name("x");
  CHECK_THROWS_WITH(twice.build(), "job 'twice': two steps are named 'x'");
}

TEST_CASE("an embedded cluster runs lambdas, named functions and built-ins") {
  api_system host;
  auto cluster = embedded_cluster::start(*host.sys);
  REQUIRE(cluster);
  job_builder job{"lambdas"};
  job.parallelism(2);
  job.source("sequence", {{"from", "1"}, {"to", "10"}})
    .filter([](const record& r) { return r.num % 2 == 0; })
    .map([](record&& r) {
      return record::integer("k" + std::to_string(r.num % 4), r.num);
    }, default_schema::keyed_numbers())
    .key_by().sum("value")
    .collect();
  auto result = (*cluster)->run(job.build());
  REQUIRE_MESSAGE(result, describe(result.error()));
  CHECK(result->state == job_state::finished);
  CHECK(texts(to_records(result->collected)) == std::vector<std::string>{"k0=12", "k2=18"});

  job_builder named{"named"};
  named.read_text_file(source_path("examples/data/sample.txt"))
    .map(shout).where("value = 'IT IS AN ANCIENT MARINER,'").collect();
  auto shouted = (*cluster)->run(named.build());
  REQUIRE_MESSAGE(shouted, describe(shouted.error()));
  CHECK(texts(to_records(shouted->collected))
        == std::vector<std::string>{"IT IS AN ANCIENT MARINER,"});
}

TEST_CASE("a job the embedded cluster's checks refuse names the step") {
  api_system host;
  auto cluster = embedded_cluster::start(*host.sys);
  REQUIRE(cluster);
  job_builder job{"bad"};
  job.sequence(1, 3).sum("bytes").name("totals").collect();
  auto id = (*cluster)->submit(job.build());
  REQUIRE(!id);
  CHECK(describe(id.error()).find("'totals'") != std::string::npos);
}

TEST_CASE("a cluster in another process refuses a job with lambdas before anything runs") {
  api_system host;
  auto cluster = mini_cluster::start(*host.sys, {});
  REQUIRE(cluster);
  // A client that takes the Dispatcher for a remote one, as remote_access
  // makes them.
  cluster_client remote{*host.sys,
                        std::make_shared<client::dispatcher_jobs>(
                          *host.sys, (*cluster)->dispatcher()),
                        false};
  job_builder job{"travel"};
  job.sequence(1, 3).map([](record&& r) { return std::move(r); }).name("twice")
    .collect();
  auto id = remote.submit(job.build());
  REQUIRE(!id);
  CHECK(describe(id.error())
        == "job 'travel': step 'twice' (a map lambda) exists only "
           "in this process, so a cluster in another process cannot run it: "
           "define the function with WEIR_MAP, WEIR_FLAT_MAP or WEIR_FILTER "
           "in a library the cluster loads (--libjars, the driver's library), "
           "or run the job on an embedded cluster");
  // A named function travels: the same job with `shout` is submitted.
  job_builder named{"travels"};
  named.sequence(1, 3).map(shout).collect();
  CHECK(remote.submit(named.build()));
}

TEST_CASE("an actor sink hands every row to a host actor, holding the job back by its replies") {
  api_system host;
  auto cluster = embedded_cluster::start(*host.sys);
  REQUIRE(cluster);
  std::vector<int64_t> values;
  size_t most_unanswered = 0;
  std::mutex mtx;
  // A host actor that answers late: it holds the replies and gives them
  // on its next tick. The sink may not have more than its 2 credits
  // unanswered at any time.
  auto receiver = host.sys->spawn([&](caf::event_based_actor* self) {
    auto held = std::make_shared<std::vector<caf::response_promise>>();
    return caf::behavior{
      [=, &values, &most_unanswered, &mtx](data_atom, row_delivery& d) {
        std::lock_guard<std::mutex> guard{mtx};
        CHECK(d.step == "host");
        CHECK(d.fields == default_schema::numbers());
        for (size_t i = 0; i < d.rows.rows; ++i)
          values.push_back(d.rows.columns[0].ints[i]);
        held->push_back(self->make_response_promise());
        most_unanswered = std::max(most_unanswered, held->size());
        if (held->size() == 1)
          self->delayed_send(self, std::chrono::milliseconds(1), tick_atom_v);
        return caf::delegated<bool>{};
      },
      [=](tick_atom) {
        for (auto& rp : *held)
          rp.deliver(true);
        held->clear();
      }};
  });
  job_builder job{"to a host actor"};
  job.sequence(1, 100000)
    .to(actor_sink(*host.sys, caf::actor_cast<row_receiver_actor>(receiver), 2))
    .name("host");
  auto result = (*cluster)->run(job.build());
  REQUIRE_MESSAGE(result, describe(result.error()));
  CHECK(result->state == job_state::finished);
  std::lock_guard<std::mutex> guard{mtx};
  REQUIRE(values.size() == 100000);
  std::sort(values.begin(), values.end());
  CHECK(values.front() == 1);
  CHECK(values.back() == 100000);
  CHECK(most_unanswered >= 1);
  CHECK(most_unanswered <= 2);
  caf::anon_send_exit(receiver, caf::exit_reason::user_shutdown);
}

TEST_CASE("a receiver that refuses the rows fails the job with that reason") {
  api_system host;
  auto cluster = embedded_cluster::start(*host.sys);
  REQUIRE(cluster);
  auto receiver = host.sys->spawn(
    [](row_receiver_actor::pointer) -> row_receiver_actor::behavior_type {
      return {[](data_atom, row_delivery&) { return false; }};
    });
  job_builder job{"refused"};
  job.config("restart-strategy.type", "none");
  job.sequence(1, 10).to(actor_sink(*host.sys, receiver)).name("host");
  auto result = (*cluster)->run(job.build());
  REQUIRE(result);
  CHECK(result->state == job_state::failed);
  CHECK(result->error.find("the receiver refused the rows") != std::string::npos);
  caf::anon_send_exit(receiver, caf::exit_reason::user_shutdown);
}

TEST_CASE("a host follows a running job with typed requests: status, savepoint, cancel") {
  weir::test::temp_dir tmp;
  api_system host;
  auto cluster = embedded_cluster::start(*host.sys);
  REQUIRE(cluster);
  job_builder job{"endless"};
  job.source("generator", {{"count", "-1"}, {"rate", "1000"}, {"keys", "3"}})
    .name("events")
    .key_by().count().name("counts")
    .discard();
  auto id = (*cluster)->submit(job.build());
  REQUIRE_MESSAGE(id, describe(id.error()));
  // Running once every subtask is: the only way to know is to ask.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  caf::expected<job_status> status{caf::error{}};
  auto all_running = [&] {
    status = (*cluster)->status(*id);
    REQUIRE(status);
    return status->subtasks_total > 0
           && status->subtasks_running == status->subtasks_total;
  };
  while (!all_running() && std::chrono::steady_clock::now() < deadline)
    continue;
  CHECK(status->state == job_state::running);
  auto path = (*cluster)->savepoint(*id, tmp.path() + "/savepoints");
  REQUIRE_MESSAGE(path, describe(path.error()));
  CHECK(path->rfind(tmp.path() + "/savepoints/", 0) == 0);
  CHECK(std::filesystem::exists(*path));
  auto cancelled = (*cluster)->cancel(*id);
  REQUIRE(cancelled);
  CHECK(cancelled->before == job_state::running);
  auto result = (*cluster)->wait(*id);
  REQUIRE(result);
  CHECK(result->state == job_state::canceled);
}

TEST_CASE("a function of another kind is refused by name; a lambda of another process is named as such") {
  job_builder job{"kinds"};
  CHECK_THROWS_WITH(job.sequence(1, 2).filter(shout),
                    "'shout' is a map function (WEIR_MAP): use .map(shout)");
  // A step name of a lambda that this process never made: a job recovered
  // after the program that built it ended.
  auto problem = ops::registry::builtin().check("map#0badf00d.3",
                                                ops::role::transform, {});
  CHECK(problem
        == "unknown operator 'map#0badf00d.3': a lambda or in-process operator "
           "of a program that is not this one (or of an earlier run of it); "
           "they exist only in the process that built the job and do not "
           "survive it");
}

TEST_CASE("the builder's watermarks and windows: the spec's vertex and an "
          "exact windowed count on an embedded cluster") {
  using namespace std::chrono_literals;
  job_builder job{"windows"};
  job.parallelism(2);
  job.sequence(0, 99)
    .select("value % 3 as key, value * 100 as t")
    .watermarks("t", 250ms, 1min)
    .name("stamped")
    .key_by("key")
    .window(window_assigner::sliding(2s, 1s))
    .allowed_lateness(500ms)
    .count("n")
    .name("per_key")
    .collect();
  auto def = job.build();
  auto g = graph_of(def.spec_json, "builder");
  auto stamped = g.vertices[static_cast<size_t>(vertex_index(g, "stamped"))];
  CHECK(stamped.watermarks.field == "t");
  CHECK(stamped.watermarks.max_out_of_orderness_ms == 250);
  CHECK(stamped.watermarks.idle_timeout_ms == 60000);
  auto per_key = g.vertices[static_cast<size_t>(vertex_index(g, "per_key"))];
  CHECK(per_key.params
        == ops::params{{"aggregate", "count"}, {"allowed-lateness", "500 ms"},
                       {"as", "n"}, {"size", "2000 ms"}, {"slide", "1000 ms"},
                       {"type", "sliding"}});

  auto result = run_finished(def);
  // Event time t = value * 100 ms: window [s, s + 2 s) holds the values
  // 10 s/1000 .. 10 s/1000 + 19 that exist; each key its residues mod 3.
  std::map<std::string, int64_t> want;
  for (int64_t start = -1000; start < 10000; start += 1000)
    for (int64_t v = 0; v <= 99; ++v)
      if (v * 100 >= start && v * 100 < start + 2000)
        ++want[fmt::format("{} {} {}", v % 3, start, start + 2000)];
  std::map<std::string, int64_t> got;
  for (auto& table : result.collected) {
    REQUIRE(table.fields.size() == 4);
    auto& c = table.rows.columns;
    for (size_t r = 0; r < table.rows.rows; ++r)
      CHECK(got.emplace(fmt::format("{} {} {}", c[0].ints[r], c[1].ints[r],
                                    c[2].ints[r]),
                        c[3].ints[r])
              .second); // each window of a key fires once
  }
  CHECK(got == want);
}

TEST_CASE("the builder's interval join: both edges, the bounds, and an exact "
          "join on an embedded cluster") {
  using namespace std::chrono_literals;
  job_builder job{"join"};
  job.parallelism(2);
  auto left = job.sequence(0, 99)
                .select("value % 5 as k, value * 100 as t")
                .monotonous_watermarks("t")
                .name("left")
                .key_by("k");
  auto right = job.sequence(0, 49)
                 .select("value % 5 as k2, value * 200 as t2, value as v")
                 .monotonous_watermarks("t2")
                 .name("right")
                 .key_by("k2");
  left.interval_join(right, -300ms, 100ms).name("joined").collect();
  auto def = job.build();
  auto g = graph_of(def.spec_json, "builder");
  auto joined = g.vertices[static_cast<size_t>(vertex_index(g, "joined"))];
  CHECK(joined.params
        == ops::params{{"left", "left"}, {"right", "right"},
                       {"lower", "-300 ms"}, {"upper", "100 ms"}});
  int into_join = 0;
  for (auto& e : g.edges)
    if (e.to == "joined") {
      ++into_join;
      CHECK(e.part == partitioning::hash);
    }
  CHECK(into_join == 2);
  job_builder other{"other"};
  CHECK_THROWS_WITH(left.interval_join(other.sequence(1, 2), 0ms, 0ms),
                    "interval_join: step 'sequence' is of another job than "
                    "step 'left'");

  auto result = run_finished(def);
  std::multiset<std::string> want;
  for (int64_t a = 0; a <= 99; ++a)
    for (int64_t b = 0; b <= 49; ++b)
      if (a % 5 == b % 5 && b * 200 >= a * 100 - 300 && b * 200 <= a * 100 + 100)
        want.insert(fmt::format("{} {} {} {}", a % 5, a * 100, b * 200, b));
  std::multiset<std::string> got;
  for (auto& table : result.collected) {
    REQUIRE(table.fields.size() == 4);
    auto& c = table.rows.columns;
    for (size_t r = 0; r < table.rows.rows; ++r)
      got.insert(fmt::format("{} {} {} {}", c[0].ints[r], c[1].ints[r],
                             c[2].ints[r], c[3].ints[r]));
  }
  CHECK(want.size() == 50); // each right row meets the left ones near it
  CHECK(got == want);
}

TEST_CASE("the builder's side output: a window's late rows reach their own "
          "sink, and none is lost") {
  using namespace std::chrono_literals;
  job_builder job{"late"};
  job.parallelism(2).config("pipeline.auto-watermark-interval", "0");
  // One source subtask, in order but for every tenth row, which is at 0 ms:
  // once the watermark passed 2 s those are late for [0 s, 2 s).
  auto counts = job.sequence(0, 99999)
                  .parallelism(1)
                  .select("value % 3 as key, if(value % 10 = 9, 0, value) as t")
                  .monotonous_watermarks("t")
                  .key_by("key")
                  .window(window_assigner::tumbling(2s))
                  .count("n")
                  .name("counts");
  counts.collect();
  counts.side_output("late").collect();
  auto def = job.build();
  auto g = graph_of(def.spec_json, "builder");
  int late_edges = 0;
  for (auto& e : g.edges)
    if (e.from == "counts" && e.output == "late")
      ++late_edges;
  CHECK(late_edges == 1);

  auto result = run_finished(def);
  int64_t counted = 0;
  int64_t late = 0;
  for (auto& table : result.collected) {
    auto& c = table.rows.columns;
    if (table.fields.size() == 4) { // key, window_start, window_end, n
      for (size_t r = 0; r < table.rows.rows; ++r)
        counted += c[3].ints[r];
    } else {
      REQUIRE(table.fields.size() == 2); // key, t: a late row as it came
      for (size_t r = 0; r < table.rows.rows; ++r) {
        CHECK(c[1].ints[r] == 0);
        ++late;
      }
    }
  }
  CHECK(late > 0);
  CHECK(counted + late == 100000);
}

TEST_CASE("the builder's window reduce and aggregate: a program's own "
          "functions, exact per key and window") {
  using namespace std::chrono_literals;
  // Event time t = value * 100 ms: 10 values per 1 s window, keyed by
  // value % 3 (as a string key, for records).
  auto windows_of = [](job_builder& job) {
    job.parallelism(2);
    return job.sequence(0, 99)
      .map([](record&& r) {
        r.key = std::to_string(r.num % 3);
        r.timestamp = r.num * 100;
        return std::move(r);
      }, default_schema::keyed_numbers())
      .key_by("key")
      .window(window_assigner::tumbling(1s));
  };
  // Key and window start → value, from the collected rows.
  auto values = [](const job_result& result) {
    std::map<std::string, int64_t> out;
    for (auto& table : result.collected) {
      REQUIRE(table.fields.size() == 4);
      auto& c = table.rows.columns;
      for (size_t r = 0; r < table.rows.rows; ++r)
        CHECK(out.emplace(fmt::format("{} {}", c[0].str(r), c[1].ints[r]),
                          c[3].ints[r])
                .second);
    }
    return out;
  };
  std::map<std::string, int64_t> largest;
  std::map<std::string, int64_t> squares;
  for (int64_t v = 0; v <= 99; ++v) {
    auto at = fmt::format("{} {}", v % 3, v / 10 * 1000);
    largest[at] = std::max(largest[at], v);
    squares[at] += v * v;
  }

  job_builder reduced{"reduced"};
  windows_of(reduced)
    .reduce([](record&& a, record&& b) { return a.num >= b.num ? a : b; })
    .name("largest")
    .collect();
  auto def = reduced.build();
  auto g = graph_of(def.spec_json, "builder");
  auto step = g.vertices[static_cast<size_t>(vertex_index(g, "largest"))];
  CHECK(step.params == ops::params{{"size", "1000 ms"}, {"type", "tumbling"}});
  CHECK(values(run_finished(def)) == largest);

  ops::window_aggregate_function sum_of_squares;
  sum_of_squares.create = [] { return std::string(8, '\0'); };
  sum_of_squares.add = [](std::string& acc, const record& r) {
    int64_t n = 0;
    std::memcpy(&n, acc.data(), 8);
    n += r.num * r.num;
    std::memcpy(acc.data(), &n, 8);
  };
  sum_of_squares.result = [](const std::string& acc) {
    int64_t n = 0;
    std::memcpy(&n, acc.data(), 8);
    return record::integer("", n);
  };
  job_builder aggregated{"aggregated"};
  windows_of(aggregated).aggregate(sum_of_squares).collect();
  CHECK(values(run_finished(aggregated.build())) == squares);
}
