// The operators on typed rows: parse, json_lines, the text sinks' formats
// (row_formats_test.cpp tests the formats themselves).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <doctest/doctest.h>

#include "operators/builtin/builtins.hpp"
#include "operators/builtin/parse_operator.hpp"
#include "operators/registry.hpp"

using namespace weir;
using namespace weir::ops;

namespace fs = std::filesystem;

namespace {

schema sch(const char* text) {
  return parse_schema(text).value;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

/// An empty directory of this process's own.
fs::path scratch_dir(const std::string& name) {
  auto dir
    = fs::temp_directory_path()
      / ("weir-row-operators-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(dir);
  return dir;
}

/// A batch of (key, value) lines with event times 100, 101, ...
row_batch input(const std::vector<std::string>& texts) {
  row_batch b{default_schema::keyed_lines()};
  int64_t t = 100;
  for (auto& x : texts) {
    b.columns[0].push_str("k");
    b.columns[1].push_str(x);
    ++b.rows;
    b.push_time(t++);
  }
  return b;
}

} // namespace

TEST_CASE("parse: validate and output schema") {
  auto f = *registry::builtin().find("parse");
  CHECK(f.validate({{"schema", "a:int64"}, {"bogus", "1"}}, role::transform)
        == "parameter 'bogus': unknown parameter of operator 'parse' (known: "
           "field, format, on_error, schema)");
  CHECK(f.validate({}, role::transform) == "parameter 'schema': missing");
  CHECK(
    f.validate({{"schema", "a:int64"}, {"format", "xml"}}, role::transform)
    == "parameter 'format': expected csv, tsv, whitespace or json, got 'xml'");
  CHECK(f.validate({{"schema", "a:int66"}}, role::transform)
        == "parameter 'schema': field 'a': unknown type 'int66' (int64, "
           "double, bool, string, bytes, timestamp)");
  CHECK(
    f.validate({{"schema", "a:int64"}, {"on_error", "ignore"}}, role::transform)
    == "parameter 'on_error': expected fail or skip, got 'ignore'");
  CHECK(f.validate({{"schema", "a:int64"},
                    {"on_error", "skip"},
                    {"format", "whitespace"},
                    {"field", "line"}},
                   role::transform)
        == "");
  auto in = sch("x: int64");
  auto d = f.output_schema({{"schema", "a:int64"}}, schema_query{&in, {}});
  CHECK(
    d.problem
    == "parse needs a string field 'value' in its input, which is (x: int64)");
  auto lines = default_schema::keyed_lines();
  d = f.output_schema({{"schema", "user:string, status:int64?"}},
                      schema_query{&lines, {}});
  CHECK(d.problem == "");
  CHECK(to_string(d.value) == "(user: string, status: int64?)");
}

TEST_CASE("parse: process, fail and skip") {
  auto f = *registry::builtin().find("parse");
  auto in_schema = default_schema::keyed_lines();
  auto out_schema = sch("user: string, status: int64");
  operator_context ctx;
  ctx.input = &in_schema;
  ctx.output = &out_schema;
  {
    auto t = f.make_transform({{"schema", "user: string, status: int64"}});
    t->open(ctx);
    auto in = input({"alice,200", "bob,404"});
    row_batch out{out_schema};
    t->process(in, out, false);
    CHECK(out.rows == 2);
    CHECK(out.times == std::vector<int64_t>{100, 101});
    auto bad = input({"carol,201", "dave,abc"});
    CHECK_THROWS_WITH(t->process(bad, out, false),
                      "line 4: field 'status': 'abc' is not an int64");
  }
  {
    auto t = f.make_transform({{"schema", "user: string, status: int64"},
                               {"on_error", "skip"},
                               {"format", "whitespace"}});
    t->open(ctx);
    auto in = input({"alice 200", "bob x", "carol", "dave 1"});
    row_batch out{out_schema};
    t->process(in, out, false);
    CHECK(out.rows == 2);
    CHECK(out.times == std::vector<int64_t>{100, 103});
    auto* p = dynamic_cast<parse_transform*>(t.get());
    REQUIRE(p);
    CHECK(p->skipped() == 2);
    CHECK(p->first_problem() == "line 2: field 'status': 'x' is not an int64");
    auto state = p->snapshot_state();
    auto t2 = f.make_transform({{"schema", "user: string, status: int64"},
                                {"on_error", "skip"},
                                {"format", "whitespace"}});
    t2->open(ctx);
    t2->restore_state(state);
    auto in2 = input({"eve y"});
    t2->process(in2, out, false);
    auto* p2 = dynamic_cast<parse_transform*>(t2.get());
    CHECK(p2->skipped() == 3);
    CHECK(p2->first_problem() == "line 2: field 'status': 'x' is not an int64");
  }
  {
    auto t = f.make_transform(
      {{"schema", "a: int64"}, {"format", "json"}, {"field", "key"}});
    auto a = sch("a: int64");
    operator_context cj;
    cj.input = &in_schema;
    cj.output = &a;
    t->open(cj);
    auto t9 = f.make_transform({{"schema", "a: int64"}});
    CHECK_THROWS_WITH(t9->open(ctx),
                      "parse: the plan's output schema (user: string, status: "
                      "int64) is not parameter 'schema' (a: int64)");
    auto in = input({"x"});
    in.columns[0].clear();
    in.columns[0].push_str("{\"a\": 5}");
    row_batch out{sch("a: int64")};
    t->process(in, out, false);
    CHECK(out.columns[0].ints == std::vector<int64_t>{5});
  }
  {
    auto t = f.make_transform({{"schema", "a: int64"}});
    auto wrong = sch("x: int64");
    operator_context c2;
    c2.input = &wrong;
    CHECK_THROWS_WITH(
      t->open(c2),
      "parse needs a string field 'value' in its input, which is (x: int64)");
  }
}

TEST_CASE("json_lines source") {
  auto dir = scratch_dir("source");
  fs::create_directories(dir);
  auto path = (dir / "in.jsonl").string();
  std::string big(1 << 20, 'z');
  {
    std::ofstream o(path);
    o << "{\"a\":1,\"s\":\"x\"}\n\n  "
         "\r\n{\"a\":2,\"s\":\"y\"}\r\n{\"a\":3,\"s\":\""
      << big << "\"}\n{\"a\":4}";
  }
  auto f = *registry::builtin().find("json_lines");
  params p{{"path", path}, {"schema", "a: int64, s: string?"}};
  CHECK(f.validate(p, role::source) == "");
  CHECK(f.validate({{"path", path}}, role::source)
        == "parameter 'schema': missing");
  CHECK(f.validate({{"path", path}, {"schema", "a:int64"}}, role::sink)
        == "parameter 'schema': unknown parameter of operator 'json_lines' "
           "(known: delivery, path)");
  auto d = f.output_schema(p, schema_query{});
  CHECK(to_string(d.value) == "(a: int64, s: string?)");
  auto s = d.value;
  auto src = f.make_source(p);
  operator_context ctx;
  ctx.output = &s;
  src->open(ctx);
  row_batch out{s};
  CHECK(src->next(out, 2));
  CHECK(out.rows == 2);
  auto state = src->snapshot_state();
  while (src->next(out, 2)) {
  }
  CHECK(out.rows == 4);
  CHECK(out.columns[0].ints == std::vector<int64_t>{1, 2, 3, 4});
  CHECK(out.columns[1].str(1) == "y");
  CHECK(out.columns[1].str(2) == big);
  CHECK(out.columns[1].is_null(3));
  auto src2 = f.make_source(p);
  src2->open(ctx);
  src2->restore_state(state);
  row_batch out2{s};
  while (src2->next(out2, 100)) {
  }
  CHECK(out2.columns[0].ints == std::vector<int64_t>{3, 4});
  // subtask 1 reads nothing
  auto src3 = f.make_source(p);
  operator_context c3;
  c3.subtask_index = 1;
  c3.parallelism = 2;
  src3->open(c3);
  row_batch out3{s};
  CHECK_FALSE(src3->next(out3, 100));
  CHECK(out3.rows == 0);
  // a bad line
  {
    std::ofstream o(path);
    o << "{\"a\":1}\n\n{\"a\":\"x\"}\n";
  }
  auto src4 = f.make_source(p);
  src4->open(ctx);
  row_batch out4{s};
  CHECK_THROWS_WITH(src4->next(out4, 100),
                    ("line 3 of '" + path
                     + "': field 'a': \"x\" is a string, the schema says int64")
                      .c_str());
  fs::remove_all(dir);
}

TEST_CASE("sinks: json_lines, text_file csv/tsv, exactly-once csv") {
  auto dir = scratch_dir("sinks");
  fs::create_directories(dir);
  auto s = sch("user: string, n: int64?");
  row_batch b{s};
  b.columns[0].push_str("a,\"b\"");
  b.columns[1].push_int(1);
  ++b.rows;
  b.columns[0].push_str("c");
  b.columns[1].push_null();
  ++b.rows;
  operator_context ctx;
  ctx.input = &s;
  auto run = [&](const operator_factory& f, params p) {
    REQUIRE(f.validate(p, role::sink) == "");
    auto k = f.make_sink(p);
    k->open(ctx);
    k->write(b);
    k->finish();
  };
  auto jl = *registry::builtin().find("json_lines");
  run(jl, {{"path", (dir / "out.jsonl").string()}});
  CHECK(slurp((dir / "out.jsonl").string())
        == "{\"user\":\"a,\\\"b\\\"\",\"n\":1}\n{\"user\":\"c\",\"n\":null}\n");
  CHECK(jl.check_files({{"path", (dir / "nope" / "x").string()}}, role::sink)
        == "parameter 'path': directory '" + (dir / "nope").string()
             + "' does not exist");
  CHECK(jl.guarantee({{"path", "x"}, {"delivery", "exactly-once"}})
        == sink_guarantee::external_exactly_once);
  auto* tf = registry::builtin().find("text_file");
  REQUIRE(tf);
  run(*tf, {{"path", (dir / "out.csv").string()}, {"format", "csv"}});
  CHECK(slurp((dir / "out.csv").string()) == "\"a,\"\"b\"\"\",1\nc,\n");
  run(*tf, {{"path", (dir / "out.tsv").string()}});
  CHECK(slurp((dir / "out.tsv").string()) == "a,\"b\"\t1\nc\t\n");
  CHECK(tf->validate({{"path", "x"}, {"format", "json"}}, role::sink)
        == "parameter 'format': expected tsv or csv, got 'json'");
  run(*tf, {{"path", (dir / "eo").string()},
            {"format", "csv"},
            {"delivery", "exactly-once"}});
  CHECK(slurp((dir / "eo" / "part-0-0").string()) == "\"a,\"\"b\"\"\",1\nc,\n");
  fs::remove_all(dir);
}
