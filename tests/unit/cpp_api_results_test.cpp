// The C++ API's results and builder staples (docs/cpp-api.md): rows of any
// schema by sink and field, nothing partial from a failed job, one-line
// errors of in-process functions, key selectors, rolling reduce, union,
// connect, from_elements, and restoring from a savepoint.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "api/cluster.hpp"
#include "api/job_builder.hpp"
#include "client/submission.hpp"
#include "messages/errors.hpp"
#include "temp_dir.hpp"

using namespace weir;

namespace {

struct host_cluster {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;
  std::unique_ptr<embedded_cluster> cluster;
  explicit host_cluster(embedded_options opts = {}) {
    prepare_actor_system(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
    auto c = embedded_cluster::start(*sys, opts);
    REQUIRE(c);
    cluster = std::move(*c);
  }
  job_result run(const job_definition& def, const submit_options& opts = {}) {
    auto result = cluster->run(def, opts);
    REQUIRE_MESSAGE(result, describe(result.error()));
    return std::move(*result);
  }
};

/// Every row of `t` as its tab-separated line, sorted.
std::vector<std::string> lines_of(table_view t) {
  std::vector<std::string> out;
  for (auto row : t)
    out.push_back(row.line());
  std::sort(out.begin(), out.end());
  return out;
}

} // namespace

TEST_CASE("results are typed for any schema, one table per collect sink by name") {
  host_cluster host;
  job_builder job{"typed"};
  auto numbers = job.sequence(1, 6).name("numbers");
  numbers.select("value % 2 as parity, value, value * 1.5 as scaled")
    .collect().name("triples");
  numbers.where("value > 4").collect().name("big");
  auto result = host.run(job.build());
  REQUIRE(result.finished());
  auto triples = result.table("triples");
  REQUIRE(triples.size() == 6);
  int64_t sum = 0;
  double scaled = 0;
  for (auto row : triples) {
    sum += row.get<int64_t>("value");
    scaled += row.get<double>("scaled");
    CHECK(row.get<int64_t>("parity") == row.get<int64_t>("value") % 2);
  }
  CHECK(sum == 21);
  CHECK(scaled == doctest::Approx(31.5));
  // The columns, in order, with their text forms.
  auto first = triples[0];
  std::vector<std::string> names;
  for (auto& f : first.fields().fields)
    names.push_back(f.name);
  CHECK(names == std::vector<std::string>{"parity", "value", "scaled"});
  CHECK(first.text(size_t{2}) == fmt::format("{}", first.get<double>("scaled")));
  CHECK(lines_of(result.table("big")) == std::vector<std::string>{"5", "6"});
  // What is wrong, named.
  CHECK_THROWS_WITH_AS(first.get<std::string>("value"),
                       "field 'value' of sink 'triples' is int64, not string",
                       std::invalid_argument);
  CHECK_THROWS_WITH_AS(first.get<int64_t>("n"),
                       "sink 'triples' has no field 'n' (its fields: parity, "
                       "value, scaled)",
                       std::out_of_range);
  CHECK_THROWS_WITH_AS(result.table("out"),
                       "no collect sink 'out' in the result (its sinks: "
                       "'triples', 'big')",
                       std::out_of_range);
}

TEST_CASE("a sink that received nothing has an empty table; a failed job's rows are dropped unless asked for") {
  host_cluster host{embedded_options{1, 4, {}, {{"restart-strategy.type", "none"}}}};
  job_builder none{"nothing"};
  none.sequence(1, 3).where("value > 10").collect().name("out");
  auto empty = host.run(none.build());
  CHECK(empty.finished());
  CHECK(empty.table("out").empty());
  CHECK(empty.table("out").fields().size() == 1);

  auto failing = [] {
    job_builder job{"fails late"};
    job.sequence(1, 100000).name("numbers")
      .map([](record&& r) {
        if (r.num == 100000)
          throw std::out_of_range("seven is not allowed");
        return std::move(r);
      }).name("picky")
      .collect().name("out");
    return job.build();
  };
  auto failed = host.run(failing());
  CHECK(failed.state == job_state::failed);
  CHECK(failed.table("out").empty());
  // One line: vertex, operator, subtask, exception type and message, as a
  // library's function says it.
  CHECK(failed.error
        == "vertex 'picky' (operator 'map', subtask 1/1) threw "
           "std::out_of_range: seven is not allowed");
  // Asked for, the rows the sink handed over before the failure stay (how
  // many depends on when it failed).
  submit_options keep;
  keep.partial_rows = true;
  auto partial = host.run(failing(), keep);
  CHECK(partial.state == job_state::failed);
  CHECK(partial.table("out").size() < 100000);
}

TEST_CASE("drop_partial_rows empties the tables of a job that did not finish, keeping their schemas") {
  job_result r;
  r.state = job_state::finished;
  collected_table t{"out", default_schema::numbers(), {}};
  t.rows.reset(t.fields);
  t.rows.columns[0].push_int(7);
  t.rows.rows = 1;
  r.collected = {t};
  client::drop_partial_rows(r);
  CHECK(r.table("out").size() == 1);
  CHECK(r.table("out")[0].get<int64_t>("value") == 7);
  for (auto state : {job_state::failed, job_state::canceled}) {
    r.collected = {t};
    r.state = state;
    client::drop_partial_rows(r);
    CHECK(r.table("out").empty());
    CHECK(r.table("out").fields() == default_schema::numbers());
  }
}

TEST_CASE("the builder's staples: key selector, rolling reduce, union, connect, from_elements") {
  host_cluster host;
  // [staples]
  job_builder job{"staples"};
  job.parallelism(2);
  auto words = job.from_elements(std::vector<std::string>{
    "apple", "avocado", "banana", "blueberry", "cherry", "apricot"});
  auto more = job.from_elements(std::vector<std::string>{"beet", "asparagus"});
  // By first letter: a key selector lambda, then a rolling reduce that
  // keeps the longest word so far.
  words.union_with(more)
    .key_by([](const record& r) { return r.text.substr(0, 1); })
    .reduce([](record&& a, record&& b) {
      return b.text.size() > a.text.size() ? std::move(b) : std::move(a);
    }).name("longest")
    .collect().name("out").parallelism(1);
  // [/staples]
  auto result = host.run(job.build());
  REQUIRE_MESSAGE(result.finished(), result.error);
  // The last emitted per key is its longest word.
  std::map<std::string, std::string> last;
  for (auto row : result.table("out"))
    last[row.get<std::string>("key")] = row.get<std::string>("value");
  CHECK(last == std::map<std::string, std::string>{
                  {"a", "asparagus"}, {"b", "blueberry"}, {"c", "cherry"}});
  CHECK(result.table("out").size() == 8); // one per record: rolling

  // [connect]
  job_builder co{"connected"};
  auto counts = co.from_elements(std::vector<record>{
    record::integer("x", 1), record::integer("y", 2)});
  auto names = co.from_elements(std::vector<std::string>{"x", "zz"});
  counts.connect(names)
    .map([](record&& r) { return record::integer(r.key, r.num * 10); },
         [](record&& r) {
           return record::integer(r.text, static_cast<int64_t>(r.text.size()));
         }, default_schema::keyed_numbers())
    .collect().name("out");
  // [/connect]
  auto both = host.run(co.build());
  REQUIRE_MESSAGE(both.finished(), both.error);
  CHECK(lines_of(both.table("out"))
        == std::vector<std::string>{"x\t1", "x\t10", "y\t20", "zz\t2"});
}

TEST_CASE("a map lambda's output schema is derived from what it returns") {
  host_cluster host;
  // [typed-map]
  job_builder job{"lengths"};
  job.from_elements(std::vector<std::string>{"ab", "abc", "ab"})
    // Text in, (key: string, value: int64) out: the pair says so.
    .map([](record&& r) { return std::make_pair(r.text, r.text.size()); })
    .name("length")
    .key_by().sum("value").name("total")
    .collect().name("out");
  // [/typed-map]
  auto result = host.run(job.build());
  REQUIRE_MESSAGE(result.finished(), result.error);
  CHECK(lines_of(result.table("out"))
        == std::vector<std::string>{"ab\t4", "abc\t3"});
  CHECK(result.table("out").fields() == default_schema::keyed_numbers());
  job_builder numbers{"numbers"};
  numbers.from_elements(std::vector<std::string>{"x", "yy"})
    .map([](record&& r) { return static_cast<int64_t>(r.text.size()); })
    .collect().name("out");
  auto counted = host.run(numbers.build());
  REQUIRE_MESSAGE(counted.finished(), counted.error);
  CHECK(lines_of(counted.table("out")) == std::vector<std::string>{"1", "2"});
  // Both jobs are listed as ended, with their names.
  auto listed = host.cluster->list();
  REQUIRE_MESSAGE(listed, describe(listed.error()));
  std::vector<std::string> names;
  for (auto& j : *listed) {
    CHECK(j.state == job_state::finished);
    names.push_back(j.name);
  }
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"lengths", "numbers"});
}

TEST_CASE("builder mistakes are refused when the job is built or submitted, naming the step") {
  job_builder job{"mistakes"};
  CHECK_THROWS_WITH_AS(job.from_elements(std::vector<record>{
                         record::integer("k", 1), record::string("k", "v")}),
                       "from_elements: element 1 is keyed with text, element "
                       "0 keyed with an int64",
                       std::invalid_argument);
  auto a = job.sequence(1, 2);
  auto b = job.sequence(3, 4);
  CHECK_THROWS_WITH_AS(a.union_with(b).name("both"),
                       "name(): a union of 2 streams is not a step; call it "
                       "on the step after the union",
                       std::logic_error);
  // A union of two schemas: refused at submission, naming both inputs.
  host_cluster host;
  job_builder mixed{"mixed"};
  mixed.sequence(1, 2).name("numbers")
    .union_with(mixed.from_elements(std::vector<std::string>{"a"}).name("words"))
    .collect().name("out");
  auto id = host.cluster->submit(mixed.build());
  REQUIRE(!id);
  CHECK(describe(id.error()).find("vertex 'out': its inputs differ: 'numbers' "
                                  "sends (value: int64), 'words' sends "
                                  "(value: string)")
        != std::string::npos);
  // A reduce without key_by.
  job_builder unkeyed{"unkeyed"};
  unkeyed.sequence(1, 2).reduce([](record&& x, record&&) { return x; })
    .collect();
  auto refused = host.cluster->submit(unkeyed.build());
  REQUIRE(!refused);
  CHECK(describe(refused.error()).find("reduce needs a keyed input: key_by() "
                                       "before it")
        != std::string::npos);
}

TEST_CASE("submit_options restore a savepoint: state by step name, unclaimed state refused unless allowed") {
  weir::test::temp_dir tmp;
  host_cluster host;
  job_builder job{"endless"};
  job.source("generator", {{"count", "-1"}, {"rate", "2000"}, {"keys", "2"}})
    .name("events")
    .key_by().count().name("counts")
    .discard();
  auto id = host.cluster->submit(job.build());
  REQUIRE_MESSAGE(id, describe(id.error()));
  // A savepoint once the job has counted records of both keys.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  auto counted = [&] {
    auto status = host.cluster->status(*id);
    REQUIRE(status);
    for (auto& v : status->metrics.vertices)
      if (v.vertex == "counts" && v.records_in >= 10)
        return true;
    return false;
  };
  while (!counted() && std::chrono::steady_clock::now() < deadline)
    continue;
  caf::expected<std::string> path{caf::error{}};
  do {
    path = host.cluster->savepoint(*id, tmp.path() + "/sp", true);
  } while (!path && std::chrono::steady_clock::now() < deadline);
  REQUIRE_MESSAGE(path, describe(path.error()));
  REQUIRE(host.cluster->wait(*id));

  auto resumed = [] {
    job_builder next{"resumed"};
    next.from_elements(std::vector<record>{record::integer("key-0", 0),
                                           record::integer("key-1", 0)})
      .name("replay")
      .key_by().count().name("counts")
      .collect().name("out");
    return next.build();
  };
  submit_options strict;
  strict.savepoint_path = *path;
  auto refused = host.cluster->submit(resumed(), strict);
  REQUIRE(!refused);
  CHECK(describe(refused.error())
        == fmt::format("savepoint '{}' holds state of vertex 'events', which "
                       "this job does not have (-n/--allowNonRestoredState "
                       "skips it)",
                       *path));
  // [restore]
  weir::submit_options opts;
  opts.savepoint_path = *path;           // weir run -s PATH
  opts.allow_non_restored_state = true;  // -n: 'events' is gone
  auto result = host.run(resumed(), opts);
  // [/restore]
  REQUIRE_MESSAGE(result.finished(), result.error);
  // Each key's count goes on from the savepoint's.
  for (auto row : result.table("out"))
    CHECK_MESSAGE(row.get<int64_t>("value") > 1, row.line());
  CHECK(result.table("out").size() == 2);
  opts.savepoint_path = tmp.path() + "/missing";
  auto missing = host.cluster->submit(resumed(), opts);
  REQUIRE(!missing);
  CHECK(describe(missing.error()).rfind("savepoint: ", 0) == 0);
}
