// The user-code API of operators/plugin.hpp: declared, typed parameters
// and the helpers' factories that get the operator context.
#include <map>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "operators/plugin.hpp"
#include "tests/rows.hpp"

using namespace weir;
using weir::plugin::args;
using weir::plugin::param;

namespace {

std::vector<plugin::param_decl> declared() {
  return {param<int64_t>("min", "shortest length"),
          param<double>("ratio", 0.5, "a share"),
          param<bool>("loud", false, "shout"),
          param<std::string>("sep", ",", "a separator")};
}

/// What `f` says of `p` as a transform.
std::string check(const ops::operator_factory& f, const ops::params& p) {
  return f.validate(p, ops::role::transform);
}

/// Runs transform `f` with `p` over lines, opened as subtask `index` of 2
/// with `files` attached; the output values.
std::vector<std::string> run(const ops::operator_factory& f,
                             const ops::params& p,
                             std::initializer_list<std::string> lines,
                             int32_t index = 0,
                             std::map<std::string, std::string> files = {}) {
  auto t = f.make_transform(p);
  auto in = test::lines(lines);
  auto rows = default_schema::lines();
  ops::operator_context ctx;
  ctx.vertex_id = "v";
  ctx.subtask_index = index;
  ctx.parallelism = 2;
  ctx.attempt_number = 1;
  ctx.files = &files;
  ctx.input = &rows;
  ctx.output = &rows;
  t->open(ctx);
  row_batch out{rows};
  t->process(in, out, false);
  std::vector<std::string> values;
  for (size_t i = 0; i < out.rows; ++i)
    values.emplace_back(out.columns[0].str(i));
  return values;
}

} // namespace

TEST_CASE("check_params knows numbers and booleans") {
  std::vector<ops::param_spec> specs{{"x", ops::param_kind::number, false},
                                     {"b", ops::param_kind::boolean, false}};
  CHECK(ops::check_params("op", {{"x", "0.5"}, {"b", "true"}}, specs) == "");
  CHECK(ops::check_params("op", {{"x", "-3"}, {"b", "false"}}, specs) == "");
  CHECK(ops::check_params("op", {{"x", "1e-3"}}, specs) == "");
  CHECK(ops::check_params("op", {{"x", "1.5x"}}, specs)
        == "parameter 'x': '1.5x' is not a number");
  CHECK(ops::check_params("op", {{"x", "inf"}}, specs)
        == "parameter 'x': 'inf' is not a number");
  CHECK(ops::check_params("op", {{"x", ""}}, specs)
        == "parameter 'x': '' is not a number");
  CHECK(ops::check_params("op", {{"b", "yes"}}, specs)
        == "parameter 'b': 'yes' is neither true nor false");
  CHECK(ops::check_params("op", {{"b", "1"}}, specs)
        == "parameter 'b': '1' is neither true nor false");
}

TEST_CASE("args: typed values and defaults") {
  args a{"op", {{"min", "3"}, {"loud", "true"}}, declared()};
  CHECK(a.get<int64_t>("min") == 3);
  CHECK(a.get<double>("ratio") == 0.5);
  CHECK(a.get<bool>("loud"));
  CHECK(a.get<std::string>("sep") == ",");
  CHECK(a.has("min"));
  CHECK_FALSE(a.has("sep"));
  args b{"op", {{"min", "-7"}, {"ratio", "2.25"}, {"sep", ""}}, declared()};
  CHECK(b.get<int64_t>("min") == -7);
  CHECK(b.get<double>("ratio") == 2.25);
  CHECK_FALSE(b.get<bool>("loud"));
  CHECK(b.get<std::string>("sep") == "");
}

TEST_CASE("args: parameters that do not fit, and reads that do not") {
  CHECK_THROWS_WITH_AS(args("op", {{"min", "x"}}, declared()),
                       "parameter 'min': 'x' is not an integer",
                       ops::operator_error);
  CHECK_THROWS_WITH_AS(args("op", {}, declared()), "parameter 'min': missing",
                       ops::operator_error);
  CHECK_THROWS_WITH_AS(args("op", {{"min", "1"}, {"max", "2"}}, declared()),
                       "parameter 'max': unknown parameter of operator 'op' "
                       "(known: loud, min, ratio, sep)",
                       ops::operator_error);
  args a{"op", {{"min", "1"}}, declared()};
  CHECK_THROWS_WITH_AS(a.get<double>("min"),
                       "operator 'op': parameter 'min' is declared int64, "
                       "read as double",
                       ops::operator_error);
  CHECK_THROWS_WITH_AS(a.get<int64_t>("max"),
                       "operator 'op' reads parameter 'max', which it does "
                       "not declare",
                       ops::operator_error);
}

TEST_CASE("helpers with declared parameters validate like built-ins") {
  auto f = plugin::filter_operator(
    "longer_than", {param<int64_t>("min", "shortest length kept")},
    [](const args& a) {
      auto min = a.get<int64_t>("min");
      return [min](const record& r) {
        return static_cast<int64_t>(r.text.size()) >= min;
      };
    });
  CHECK(check(f, {{"min", "2"}}) == "");
  CHECK(check(f, {{"min", "2"}, {"max", "3"}})
        == "parameter 'max': unknown parameter of operator 'longer_than' "
           "(known: min)");
  CHECK(check(f, {}) == "parameter 'min': missing");
  CHECK(run(f, {{"min", "2"}}, {"a", "bb", "ccc"})
        == std::vector<std::string>{"bb", "ccc"});
  // The helpers without declarations take no parameters.
  auto plain = plugin::map_operator("same", [](record&& r) { return r; });
  CHECK(check(plain, {{"x", "1"}})
        == "parameter 'x': unknown parameter of operator 'same' (known: "
           "none)");
  CHECK(run(plain, {}, {"a"}) == std::vector<std::string>{"a"});
}

TEST_CASE("a helper's factory may take the operator context") {
  auto f = plugin::flat_map_operator(
    "where", {param<std::string>("file", "an attached file")},
    [](const args& a, const ops::operator_context& ctx) {
      auto tag = std::to_string(ctx.subtask_index) + "/"
                 + std::to_string(ctx.parallelism) + "#"
                 + std::to_string(ctx.attempt_number) + " "
                 + ctx.file(a.get<std::string>("file"));
      return [tag](record&& r, std::vector<record>& out) {
        out.push_back(record::string("", tag));
        out.push_back(std::move(r));
      };
    });
  CHECK(run(f, {{"file", "d.txt"}}, {"x"}, 1, {{"d.txt", "/tmp/d.txt"}})
        == std::vector<std::string>{"1/2#1 /tmp/d.txt", "x"});
  CHECK_THROWS_WITH_AS(run(f, {{"file", "e.txt"}}, {"x"}, 1,
                           {{"d.txt", "/a"}, {"c.txt", "/b"}}),
                       "file 'e.txt' is not attached to the job (attached: "
                       "c.txt, d.txt; attach files with --file)",
                       ops::operator_error);
  ops::operator_context none;
  CHECK_THROWS_WITH_AS(none.file("e.txt"),
                       "file 'e.txt' is not attached to the job (none is; "
                       "attach files with --file)",
                       ops::operator_error);
}

TEST_CASE("sources, transforms and sinks with declared parameters") {
  struct nothing : ops::source {
    explicit nothing(int64_t n) : n(n) {}
    bool next(row_batch&, size_t) override { return false; }
    int64_t n;
  };
  auto f = plugin::source_operator(
    "nothing", {param<int64_t>("n", 4, "a number")},
    [](const args& a) { return std::make_unique<nothing>(a.get<int64_t>("n")); });
  CHECK(f.validate({{"n", "x"}}, ops::role::source)
        == "parameter 'n': 'x' is not an integer");
  CHECK(dynamic_cast<nothing&>(*f.make_source({})).n == 4);
  CHECK(dynamic_cast<nothing&>(*f.make_source({{"n", "9"}})).n == 9);
  CHECK_THROWS_WITH_AS(f.make_source({{"m", "9"}}),
                       "parameter 'm': unknown parameter of operator "
                       "'nothing' (known: n)",
                       ops::operator_error);
  struct drop : ops::sink {
    void write(const row_batch&) override {}
  };
  auto s = plugin::sink_operator("drop", {}, [](const args&) {
    return std::make_unique<drop>();
  });
  CHECK(s.validate({{"x", "1"}}, ops::role::sink)
        == "parameter 'x': unknown parameter of operator 'drop' (known: "
           "none)");
  CHECK(s.make_sink({}) != nullptr);
}
