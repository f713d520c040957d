#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <doctest/doctest.h>

#include <set>
#include <fmt/format.h>

#include "operators/builtin/aggregation.hpp"
#include "operators/builtin/builtins.hpp"
#include "operators/demangle.hpp"
#include "operators/registry.hpp"
#include "tests/rows.hpp"

using namespace weir;
using namespace weir::ops;
using weir::test::default_schema_of;
using weir::test::drained_sorted;
using weir::test::to_records;
using weir::test::to_rows;

namespace fs = std::filesystem;

namespace {

const registry& reg() {
  return registry::builtin();
}

operator_context context(int32_t index = 0, int32_t parallelism = 1,
                         bool bounded = true) {
  operator_context ctx;
  ctx.job_name = "test";
  ctx.vertex_id = "v";
  ctx.subtask_index = index;
  ctx.parallelism = parallelism;
  ctx.bounded = bounded;
  return ctx;
}

/// A source instance, opened with the output schema the planner derives
/// for it; its rows accumulate in `out`.
struct opened_source {
  schema rows;
  std::unique_ptr<source> src;
  row_batch out;

  opened_source(const std::string& name, const params& p, int32_t index = 0,
                int32_t parallelism = 1)
    : rows(reg().output_schema(name, role::source, p, {}).value),
      src(reg().find(name)->make_source(p)),
      out(rows) {
    auto ctx = context(index, parallelism);
    ctx.output = &rows;
    src->open(ctx);
  }

  /// Appends at most `max` rows to `out`; false at the end.
  bool next(size_t max) {
    return src->next(out, max);
  }

  /// Every row read so far, as records.
  std::vector<record> records() const {
    return to_records(out, rows);
  }
};

/// Runs a source instance to exhaustion, `batch` records per next() call.
std::vector<record> run_source(const std::string& name, const params& p,
                               int32_t index = 0, int32_t parallelism = 1,
                               size_t batch = 7) {
  opened_source s{name, p, index, parallelism};
  for (int calls = 0; calls < 1000000; ++calls) {
    auto before = s.out.rows;
    bool more = s.next(batch);
    REQUIRE(s.out.rows - before <= batch);
    if (!more)
      return s.records();
  }
  FAIL("source did not end");
  return s.records();
}

/// A transform instance on rows of `input` (one of the default schemas),
/// opened with the output schema the planner derives. An input with a
/// field "key" arrives keyed by it, as on a hash edge.
struct opened_transform {
  schema input;
  schema output;
  std::unique_ptr<transform> t;

  opened_transform(const std::string& name, const params& p, schema in,
                   bool bounded = true)
    : input(std::move(in)) {
    schema_query q{&input, {}};
    auto key = input.find("key");
    if (key)
      q.key = {"key"};
    auto derived = reg().output_schema(name, role::transform, p, q);
    REQUIRE_MESSAGE(derived.problem.empty(), derived.problem);
    output = derived.value;
    t = reg().find(name)->make_transform(p);
    auto ctx = context(0, 1, bounded);
    ctx.input = &input;
    ctx.output = &output;
    if (key)
      ctx.key = {*key};
    t->open(ctx);
  }

  /// Processes `in` (as rows of the input schema); what it emits.
  std::vector<record> process(const std::vector<record>& in,
                              bool partial = false) {
    auto rows = to_rows(input, in);
    row_batch out{output};
    t->process(rows, out, partial);
    return to_records(out, output);
  }

  /// What finish() emits.
  std::vector<record> finish() {
    row_batch out{output};
    t->finish(out);
    return to_records(out, output);
  }
};

/// Runs one batch (and finish) through a transform, on rows of the
/// default schema that holds `in`.
std::vector<record> run_transform(const std::string& name, const params& p,
                                  const std::vector<record>& in,
                                  bool partial = false) {
  opened_transform t{name, p, default_schema_of(in)};
  auto out = t.process(in, partial);
  auto tail = t.finish();
  out.insert(out.end(), tail.begin(), tail.end());
  return out;
}

/// The context of a sink instance on rows of `rows`.
operator_context sink_context(const schema& rows, int32_t index = 0,
                              int32_t parallelism = 1) {
  auto ctx = context(index, parallelism);
  ctx.input = &rows;
  return ctx;
}

const schema numbers_rows = default_schema::numbers();
const schema lines_rows = default_schema::lines();
const schema keyed_rows = default_schema::keyed_numbers();
const schema keyed_lines_rows = default_schema::keyed_lines();

std::vector<record> nums(std::initializer_list<int64_t> values) {
  std::vector<record> out;
  for (auto v : values)
    out.push_back(record::integer({}, v));
  return out;
}

std::vector<record> texts(std::initializer_list<const char*> values) {
  std::vector<record> out;
  for (const auto* v : values)
    out.push_back(record::string({}, v));
  return out;
}

std::vector<int64_t> values(const std::vector<record>& rs) {
  std::vector<int64_t> out;
  for (const auto& r : rs)
    out.push_back(r.num);
  return out;
}

/// The records as sink lines ("key<TAB>value" or "value"), one string.
std::string lines(const std::vector<record>& rs) {
  std::string out;
  for (const auto& r : rs)
    append_text_line(out, r);
  return out;
}

std::string read_file(const fs::path& p) {
  std::ifstream in{p, std::ios::binary};
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_file(const fs::path& p, const std::string& content) {
  std::ofstream out{p, std::ios::binary};
  out << content;
}

/// A fresh directory, removed with everything in it at the end of the test.
struct temp_dir {
  fs::path path;
  temp_dir() {
    std::string tmpl = (fs::temp_directory_path() / "weir-ops-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path = tmpl;
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  std::string operator/(const std::string& name) const {
    return (path / name).string();
  }
};

/// Splits file content the way the text_file source defines lines.
std::vector<std::string> expected_lines(const std::string& content) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start < content.size()) {
    auto nl = content.find('\n', start);
    auto end = nl == std::string::npos ? content.size() : nl;
    auto line = content.substr(start, end - start);
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    out.push_back(line);
    start = end + 1;
  }
  return out;
}

std::vector<std::string> text_values(const std::vector<record>& rs) {
  std::vector<std::string> out;
  for (const auto& r : rs) {
    CHECK(r.is_text);
    CHECK(r.key.empty());
    out.push_back(r.text);
  }
  return out;
}

/// Reads `path` with 1..7 instances and checks every line comes exactly once,
/// in file order within (and across, in instance order) the instances.
void check_split_reading(const std::string& path, const std::string& content) {
  auto expected = expected_lines(content);
  for (int32_t n = 1; n <= 7; ++n) {
    CAPTURE(n);
    std::vector<std::string> all;
    for (int32_t i = 0; i < n; ++i) {
      auto part = text_values(run_source("text_file", {{"path", path}}, i, n,
                                         static_cast<size_t>(3 + i)));
      all.insert(all.end(), part.begin(), part.end());
    }
    CHECK(all == expected);
  }
}

/// The shared test data directory, found from this file's path (which the
/// build gives relative to the build directory), or WEIR_TESTDATA.
fs::path testdata_dir() {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("WEIR_TESTDATA"))
    candidates.emplace_back(env);
  fs::path here{__FILE__};
  auto up = here.parent_path() / "../../../shared/testdata";
  candidates.push_back(up);
  std::error_code ec;
  auto exe = fs::read_symlink("/proc/self/exe", ec); // build/tests/unit/x
  if (!ec)
    candidates.push_back(exe.parent_path() / "../.." / up);
  for (auto dir = fs::current_path(); !dir.empty(); dir = dir.parent_path()) {
    candidates.push_back(dir / "../shared/testdata");
    candidates.push_back(dir / up);
    if (dir == dir.parent_path())
      break;
  }
  for (const auto& c : candidates)
    if (fs::exists(c / "flink-wordcount/faust.txt"))
      return c;
  return {};
}

/// Captures what `f` writes to file descriptor 1.
template <class F>
std::string capture_stdout(F f) {
  temp_dir dir;
  auto file = dir / "stdout";
  std::fflush(stdout);
  int saved = ::dup(1);
  int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  ::dup2(fd, 1);
  ::close(fd);
  f();
  std::fflush(stdout);
  ::dup2(saved, 1);
  ::close(saved);
  return read_file(file);
}

} // namespace

// -- registry -----------------------------------------------------------------

TEST_CASE("short_key holds every string of up to 15 bytes exactly") {
  // Built from overlapping loads: each length has its own code path.
  std::string text = "abcdefghijklmno";
  std::string zeros(15, '\0');
  for (size_t n = 0; n <= short_key::max_size; ++n) {
    CAPTURE(n);
    auto s = std::string_view{text}.substr(0, n);
    short_key k{s};
    CHECK(k.view() == s);
    CHECK(k.size() == n);
    CHECK(k == short_key{std::string{s}});
    auto z = std::string_view{zeros}.substr(0, n);
    CHECK(short_key{z}.view() == z);
    if (n > 0) {
      CHECK_FALSE(k == short_key{z});
      // Same bytes, one shorter: the length tells them apart.
      CHECK_FALSE(short_key{z} == short_key{z.substr(0, n - 1)});
      for (size_t i = 0; i < n; ++i) {
        auto other = std::string{s};
        other[i] = 'X';
        CHECK_FALSE(k == short_key{other});
        CHECK(short_key::hash{}(k) != short_key::hash{}(short_key{other}));
      }
    }
  }
}

TEST_CASE("a keyed sum over short and long string keys keeps one row a key") {
  // Short keys (at most 15 bytes) and longer ones live in two tables; the
  // general path (a batch with nulls) must find the same entries.
  auto parsed = parse_schema("k: string, v: int64?");
  REQUIRE(parsed.problem.empty());
  auto& in = parsed.value;
  keyed_aggregation sum{aggregation_kind::sum, {{"field", "v"}}, in, {0}};
  auto batch = [&](bool with_null) {
    row_batch b{in};
    for (auto k : {"a", "a-key-of-15-byt", "a-key-of-16-byte", "a"}) {
      b.columns[0].push_str(k);
      b.columns[1].push_int(1);
      ++b.rows;
    }
    if (with_null) {
      b.columns[0].push_str("a");
      b.columns[1].push_null();
      ++b.rows;
    }
    return b;
  };
  sum.add(batch(false), false); // the fast path
  sum.add(batch(true), false);  // the general path (a null value)
  CHECK(sum.size() == 3);
  row_batch out{sum.output()};
  sum.drain(out);
  std::map<std::string, int64_t> sums;
  for (size_t r = 0; r < out.rows; ++r)
    sums[std::string{out.columns[0].str(r)}] = out.columns[1].ints[r];
  CHECK(sums == std::map<std::string, int64_t>{{"a", 4},
                                               {"a-key-of-15-byt", 2},
                                               {"a-key-of-16-byte", 2}});
}

TEST_CASE("the builtin registry holds all operators") {
  std::vector<std::string> expected{
    "avg",      "collect", "count",   "discard", "elements", "filter",    "flat_map",
    "generator", "interval_join", "json_lines", "map", "max", "min", "parse",
    "project",  "sequence", "stdout", "sum",     "text_file", "weir.driver",
    "window"};
  CHECK(reg().names() == expected);
  CHECK(reg().find("nope") == nullptr);
  for (const auto* name : {"count", "sum", "min", "max"})
    CHECK(reg().find(name)->combinable);
  // avg's partial aggregates would need a sum and a count: not combinable.
  for (const auto* name :
       {"avg", "map", "flat_map", "filter", "project", "parse", "sequence",
        "collect"})
    CHECK_FALSE(reg().find(name)->combinable);
  CHECK(to_string(role::source) == "source");
  CHECK(to_string(role::transform) == "transform");
  CHECK(to_string(role::sink) == "sink");
}

TEST_CASE("registry check reports unknown operators and wrong roles") {
  CHECK(reg().check("foo", role::source, {})
        == "unknown operator 'foo' (not built in: an operator of a user "
           "library needs --libjars LIB, and weir info --libjars LIB lists "
           "them)");
  CHECK(reg().check("count", role::source, {})
        == "operator 'count' cannot be a source");
  CHECK(reg().check("sequence", role::sink, {{"from", "1"}, {"to", "2"}})
        == "operator 'sequence' cannot be a sink");
  CHECK(reg().check("collect", role::transform, {})
        == "operator 'collect' cannot be a transform");
  CHECK(reg().check("map", role::source, {{"function", "identity"}})
        == "operator 'map' cannot be a source");
}

TEST_CASE("registry check reports parameter problems") {
  CHECK(reg().check("sequence", role::source, {{"from", "1"}, {"to", "5"}})
        == "");
  CHECK(reg().check("sequence", role::source, {{"to", "5"}})
        == "parameter 'from': missing");
  CHECK(reg().check("sequence", role::source, {{"from", "abc"}, {"to", "5"}})
        == "parameter 'from': 'abc' is not an integer");
  CHECK(reg().check("sequence", role::source, {{"from", "1"}, {"to", "5x"}})
        == "parameter 'to': '5x' is not an integer");
  CHECK(reg().check("sequence", role::source, {{"from", " 1"}, {"to", "5"}})
        == "parameter 'from': ' 1' is not an integer");
  CHECK(reg().check("sequence", role::source,
                    {{"from", "1"}, {"to", "99999999999999999999"}})
        == "parameter 'to': '99999999999999999999' is not an integer");
  CHECK(reg().check("sequence", role::source,
                    {{"from", "1"}, {"to", "5"}, {"colour", "red"}})
        == "parameter 'colour': unknown parameter of operator 'sequence' "
           "(known: from, rate, to)");
  CHECK(reg().check("sequence", role::source, {{"from", "5"}, {"to", "1"}})
        == "parameter 'to': 1 is less than 'from' (5)");
  CHECK(reg().check("generator", role::source, {}) == "");
  CHECK(reg().check("generator", role::source, {{"count", "-1"}}) == "");
  CHECK(reg().check("generator", role::source, {{"count", "-2"}})
        == "parameter 'count': '-2' is neither a non-negative integer nor -1");
  CHECK(reg().check("generator", role::source, {{"keys", "0"}})
        == "parameter 'keys': '0' is not a positive integer");
  CHECK(reg().check("generator", role::source, {{"rate", "-5"}})
        == "parameter 'rate': '-5' is not a non-negative integer");
  CHECK(reg().check("generator", role::source, {{"speed", "1"}})
        == "parameter 'speed': unknown parameter of operator 'generator' "
           "(known: count, keys, rate)");
  CHECK(reg().check("count", role::transform, {{"x", "1"}})
        == "parameter 'x': unknown parameter of operator 'count' "
           "(known: as)");
  CHECK(reg().check("discard", role::sink, {{"delay_ms", "x"}})
        == "parameter 'delay_ms': 'x' is not an integer");
  CHECK(reg().check("stdout", role::sink, {}) == "");
  CHECK(reg().check("collect", role::sink, {}) == "");
}

TEST_CASE("registry check reports function problems") {
  CHECK(reg().check("map", role::transform, {})
        == "parameter 'function' or 'select': missing");
  CHECK(reg().check("map", role::transform, {{"function", "x"}})
        == "parameter 'function': unknown map function 'x' (known: fail_once, identity, "
           "key_by_value, key_mod, length, lower, negate, square, upper; an "
           "operator of a user library is a step of its own: \"operator\": "
           "\"x\", in C++ .apply(\"x\"))");
  CHECK(reg().check("flat_map", role::transform, {{"function", "x"}})
        == "parameter 'function': unknown flat_map function 'x' (known: split, "
           "tokenize; an operator of a user library is a step of its own: "
           "\"operator\": \"x\", in C++ .apply(\"x\"))");
  CHECK(reg().check("filter", role::transform, {{"function", "x"}})
        == "parameter 'function': unknown filter function 'x' (known: "
           "contains, even, greater_than, nonempty, odd; an operator of a "
           "user library is a step of its own: \"operator\": \"x\", in "
           "C++ .apply(\"x\"))");
  CHECK(reg().check("map", role::transform, {{"function", "key_mod"}})
        == "parameter 'modulus': missing");
  CHECK(reg().check("map", role::transform,
                    {{"function", "key_mod"}, {"modulus", "0"}})
        == "parameter 'modulus': '0' is not a positive integer");
  CHECK(reg().check("map", role::transform,
                    {{"function", "key_mod"}, {"modulus", "4"}})
        == "");
  CHECK(reg().check("map", role::transform,
                    {{"function", "identity"}, {"modulus", "4"}})
        == "parameter 'modulus': unknown parameter of operator 'map' (known: "
           "function)");
  CHECK(reg().check("filter", role::transform,
                    {{"function", "greater_than"}, {"threshold", "ten"}})
        == "parameter 'threshold': 'ten' is not an integer");
  CHECK(reg().check("filter", role::transform, {{"function", "contains"}})
        == "parameter 'substring': missing");
}

TEST_CASE("text_file checks its path per role") {
  temp_dir dir;
  auto file = dir / "in.txt";
  write_file(file, "a\n");
  CHECK(reg().check("text_file", role::source, {{"path", file}}) == "");
  CHECK(reg().check("text_file", role::source, {})
        == "parameter 'path': missing");
  auto missing = dir / "missing.txt";
  CHECK(reg().check("text_file", role::source, {{"path", missing}})
        == "parameter 'path': file '" + missing + "' does not exist");
  CHECK(reg().check("text_file", role::source, {{"path", dir.path.string()}})
        == "parameter 'path': file '" + dir.path.string()
             + "' is a directory");
  if (::geteuid() != 0) {
    fs::permissions(file, fs::perms::none);
    CHECK(reg().check("text_file", role::source, {{"path", file}})
          == "parameter 'path': file '" + file + "' is not readable");
  }
  CHECK(reg().check("text_file", role::sink, {{"path", dir / "out.txt"}})
        == "");
  CHECK(reg().check("text_file", role::sink, {{"path", "-"}}) == "");
  CHECK(reg().check("text_file", role::sink, {{"path", "relative.txt"}}) == "");
  auto nodir = dir / "no/such";
  CHECK(reg().check("text_file", role::sink, {{"path", nodir + "/out.txt"}})
        == "parameter 'path': directory '" + nodir + "' does not exist");
  CHECK(reg().check("text_file", role::sink, {{"path", file}, {"mode", "x"}})
        == "parameter 'mode': unknown parameter of operator 'text_file' "
           "(known: delivery, format, path)");
  CHECK(reg().check("text_file", role::source, {{"path", file},
                                                {"delivery", "exactly-once"}})
        == "parameter 'delivery': unknown parameter of operator 'text_file' "
           "(known: max_line_length, path)");
}

TEST_CASE("factories throw operator_error on bad parameters") {
  CHECK_THROWS_AS(reg().find("sequence")->make_source({{"from", "x"}}),
                  operator_error);
  CHECK_THROWS_WITH_AS(reg().find("map")->make_transform({{"function", "y"}}),
                       doctest::Contains("unknown map function 'y'"),
                       operator_error);
  CHECK_THROWS_AS(reg().find("discard")->make_sink({{"delay_ms", "-1"}}),
                  operator_error);
  CHECK_THROWS_AS(reg().find("count")->make_transform({{"a", "b"}}),
                  operator_error);
}

TEST_CASE("sources report whether they are bounded") {
  CHECK(reg().find("sequence")->bounded({{"from", "1"}, {"to", "2"}}));
  CHECK(reg().find("text_file")->bounded({{"path", "x"}}));
  CHECK(reg().find("generator")->bounded({{"count", "10"}}));
  CHECK(reg().find("generator")->bounded({{"count", "0"}}));
  CHECK_FALSE(reg().find("generator")->bounded({}));
  CHECK_FALSE(reg().find("generator")->bounded({{"count", "-1"}}));
  CHECK_FALSE(reg().find("generator")->bounded({{"count", "bad"}}));
}

// -- sequence -----------------------------------------------------------------

TEST_CASE("sequence produces from..to as unkeyed integers") {
  auto out = run_source("sequence", {{"from", "1"}, {"to", "10"}});
  CHECK(values(out) == std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  for (const auto& r : out) {
    CHECK(r.key.empty());
    CHECK_FALSE(r.is_text);
  }
  CHECK(values(run_source("sequence", {{"from", "-2"}, {"to", "-2"}}))
        == std::vector<int64_t>{-2});
}

TEST_CASE("a sequence with a rate emits a twentieth of a second's numbers "
          "at a time and pauses for as long as they take") {
  opened_source paced{"sequence", {{"from", "1"}, {"to", "250"}, {"rate", "2000"}}};
  CHECK(paced.next(1024)); // 100 of 250
  CHECK(paced.out.rows == 100);
  CHECK(paced.src->pause() == std::chrono::milliseconds{50});
  CHECK(paced.next(1024));
  CHECK_FALSE(paced.next(1024)); // the last 50
  CHECK(paced.out.rows == 250);
  CHECK(paced.src->pause() == std::chrono::milliseconds{25});
  // Without a rate: as many as asked for, no pause.
  opened_source fast{"sequence", {{"from", "1"}, {"to", "250"}}};
  CHECK_FALSE(fast.next(1024));
  CHECK(fast.out.rows == 250);
  CHECK(fast.src->pause().count() == 0);
}

TEST_CASE("sequence splits contiguously like NumberSequenceIterator") {
  // 10 numbers over 3 instances: 4, 3, 3.
  CHECK(values(run_source("sequence", {{"from", "1"}, {"to", "10"}}, 0, 3))
        == std::vector<int64_t>{1, 2, 3, 4});
  CHECK(values(run_source("sequence", {{"from", "1"}, {"to", "10"}}, 1, 3))
        == std::vector<int64_t>{5, 6, 7});
  CHECK(values(run_source("sequence", {{"from", "1"}, {"to", "10"}}, 2, 3))
        == std::vector<int64_t>{8, 9, 10});
  // More instances than numbers: the last ones are empty.
  CHECK(run_source("sequence", {{"from", "1"}, {"to", "2"}}, 4, 5).empty());
  for (int32_t n = 1; n <= 7; ++n) {
    std::vector<int64_t> all;
    size_t smallest = SIZE_MAX;
    size_t largest = 0;
    for (int32_t i = 0; i < n; ++i) {
      auto part = values(
        run_source("sequence", {{"from", "-17"}, {"to", "83"}}, i, n));
      smallest = std::min(smallest, part.size());
      largest = std::max(largest, part.size());
      all.insert(all.end(), part.begin(), part.end());
    }
    CHECK(all.size() == 101);
    for (size_t k = 0; k < all.size(); ++k)
      CHECK(all[k] == -17 + static_cast<int64_t>(k));
    CHECK(largest - smallest <= 1);
  }
}

TEST_CASE("sequence handles the full int64 range") {
  auto lo = std::to_string(std::numeric_limits<int64_t>::min());
  auto hi = std::to_string(std::numeric_limits<int64_t>::max());
  opened_source src{"sequence", {{"from", lo}, {"to", hi}}, 1, 2};
  CHECK(src.next(2));
  CHECK(values(src.records()) == std::vector<int64_t>{0, 1});
  opened_source last{"sequence", {{"from", hi}, {"to", hi}}};
  CHECK_FALSE(last.next(5));
  CHECK(values(last.records())
        == std::vector<int64_t>{std::numeric_limits<int64_t>::max()});
}

// -- generator ----------------------------------------------------------------

TEST_CASE("generator interleaves global indices over subtasks") {
  params p{{"count", "10"}, {"keys", "3"}};
  auto first = run_source("generator", p, 0, 2, 2);
  CHECK(values(first) == std::vector<int64_t>{0, 2, 4, 6, 8});
  std::vector<std::string> keys;
  for (const auto& r : first)
    keys.push_back(r.key);
  CHECK(keys == std::vector<std::string>{"key-0", "key-2", "key-1", "key-0",
                                         "key-2"});
  CHECK(values(run_source("generator", p, 1, 2, 3))
        == std::vector<int64_t>{1, 3, 5, 7, 9});
  CHECK(values(run_source("generator", {{"count", "10"}}, 2, 3))
        == std::vector<int64_t>{2, 5, 8});
  CHECK(run_source("generator", {{"count", "0"}}).empty());
  auto one = run_source("generator", {{"count", "1"}});
  REQUIRE(one.size() == 1);
  CHECK(one[0].key == "key-0");
  CHECK(one[0].timestamp > 1600000000000); // now, in ms
}

TEST_CASE("generator without count never ends") {
  opened_source src{"generator", {}};
  for (int i = 0; i < 5; ++i)
    CHECK(src.next(100));
  auto out = src.records();
  CHECK(out.size() == 500);
  CHECK(out[499].num == 499);
  CHECK(out[499].key == "key-9");
  CHECK(src.src->pause().count() == 0);
}

TEST_CASE("generator with a rate reports a pause instead of sleeping") {
  opened_source src{"generator", {{"rate", "10"}}};
  CHECK(src.next(100));
  CHECK(src.out.rows == 1); // the first record is due at once
  CHECK(src.src->pause().count() > 0);
  CHECK(src.src->pause().count() <= 100000);
  CHECK(src.next(100));
  CHECK(src.out.rows == 1); // nothing more is due yet
  CHECK(src.src->pause().count() > 0);
}

// -- text_file source ---------------------------------------------------------

TEST_CASE("text_file reads lines, stripping \\n and \\r\\n") {
  temp_dir dir;
  auto file = dir / "in.txt";
  write_file(file, "first line\r\n\nthird\n  fourth  \nlast");
  auto out = run_source("text_file", {{"path", file}}, 0, 1, 2);
  CHECK(text_values(out)
        == std::vector<std::string>{"first line", "", "third", "  fourth  ",
                                    "last"});
  auto src = reg().find("text_file")->make_source({{"path", file}});
  CHECK(src->blocking_io());
}

TEST_CASE("text_file splits a file across 1..7 instances, each line once") {
  temp_dir dir;
  std::string content;
  for (int i = 0; i < 300; ++i) {
    content += "line " + std::to_string(i);
    content += std::string(static_cast<size_t>(i * 7 % 23), 'x');
    content += i % 10 == 0 ? "\r\n" : "\n";
    if (i % 17 == 0)
      content += "\n"; // empty lines
  }
  auto with_nl = dir / "with_nl.txt";
  write_file(with_nl, content);
  check_split_reading(with_nl, content);

  auto without_nl = dir / "without_nl.txt";
  auto trimmed = content + "tail without newline";
  write_file(without_nl, trimmed);
  check_split_reading(without_nl, trimmed);

  for (std::string small : {"", "\n", "\n\n\n", "a", "ab\ncd", "x\n\ny\n"}) {
    CAPTURE(small);
    auto file = dir / "small.txt";
    write_file(file, small);
    check_split_reading(file, small);
  }
}

TEST_CASE("text_file handles lines longer than its read buffer") {
  temp_dir dir;
  std::string content = "short\n";
  content += std::string(700 * 1024, 'a') + "\n";
  for (int i = 0; i < 20000; ++i)
    content += "row " + std::to_string(i) + "\n";
  content += std::string(300 * 1024, 'b');
  auto file = dir / "big.txt";
  write_file(file, content);
  check_split_reading(file, content);
}

TEST_CASE("text_file throws with the path when it cannot open the file") {
  CHECK_THROWS_WITH_AS((opened_source{"text_file", {{"path", "/no/such/file"}}}),
                       doctest::Contains("'/no/such/file'"), operator_error);
}

TEST_CASE("text_file on a FIFO without a writer returns instead of blocking") {
  temp_dir dir;
  auto fifo = dir / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  opened_source src{"text_file", {{"path", fifo}}}; // opens although
                                                    // nobody writes
  auto before = std::chrono::steady_clock::now();
  CHECK(src.next(10)); // nothing yet, but not the end either
  CHECK(src.out.empty());
  CHECK(std::chrono::steady_clock::now() - before < std::chrono::seconds(2));
  // A writer comes: its lines are read as one stream, to its end.
  std::thread writer{[&] {
    auto fd = ::open(fifo.c_str(), O_WRONLY);
    std::string text = "one\ntwo\nthree";
    CHECK(::write(fd, text.data(), text.size()) == ssize_t(text.size()));
    ::close(fd);
  }};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  bool more = true;
  while (more && std::chrono::steady_clock::now() < deadline)
    more = src.next(10);
  writer.join();
  CHECK_FALSE(more);
  CHECK(text_values(src.records())
        == std::vector<std::string>{"one", "two", "three"});
}

TEST_CASE("text_file reads a file without a size as one stream, instance 0") {
  // /proc files report size 0: splitting by size would read nothing.
  auto first = run_source("text_file", {{"path", "/proc/self/status"}}, 0, 2);
  auto second = run_source("text_file", {{"path", "/proc/self/status"}}, 1, 2);
  CHECK(first.size() > 3);
  CHECK(second.empty());
}

TEST_CASE("text_file fails on a line longer than max_line_length") {
  CHECK_THROWS_WITH_AS(
    run_source("text_file", {{"path", "/dev/zero"}, {"max_line_length", "1000"}}),
    "a line of '/dev/zero' (starting at byte 0) is longer than 1000 bytes "
    "(parameter 'max_line_length')",
    operator_error);
  // Without the parameter too: /dev/zero never ends a line.
  CHECK_THROWS_WITH_AS(run_source("text_file", {{"path", "/dev/zero"}}),
                       doctest::Contains("longer than 16777216 bytes"),
                       operator_error);
  temp_dir dir;
  auto file = dir / "in.txt";
  write_file(file, "short\n" + std::string(50, 'x') + "\nshort\n");
  CHECK_THROWS_WITH_AS(
    run_source("text_file", {{"path", file}, {"max_line_length", "20"}}),
    doctest::Contains("starting at byte 6) is longer than 20 bytes"),
    operator_error);
  CHECK(run_source("text_file", {{"path", file}, {"max_line_length", "50"}})
          .size() == 3);
}

// -- map ----------------------------------------------------------------------

TEST_CASE("map identity keeps records") {
  auto in = nums({3, 1, 2});
  in[0].key = "k";
  in[0].timestamp = 42;
  auto expected = in;
  CHECK(run_transform("map", {{"function", "identity"}}, in) == expected);
}

TEST_CASE("map key_mod keys by num mod modulus") {
  auto out = run_transform("map", {{"function", "key_mod"}, {"modulus", "4"}},
                           nums({0, 5, 10, -1, 123456789}));
  CHECK(lines(out) == "0\t0\n1\t5\n2\t10\n3\t-1\n1\t123456789\n");
}

TEST_CASE("map key_mod formats remainders beyond its table of digits") {
  // Moduli up to 65536 read digits from a table, larger ones format them.
  auto lo = std::numeric_limits<int64_t>::min();
  auto hi = std::numeric_limits<int64_t>::max();
  auto out = run_transform("map", {{"function", "key_mod"}, {"modulus", "1000003"}},
                           nums({-1, lo, hi, 5000022}));
  CHECK(lines(out)
        == fmt::format("1000002\t-1\n{}\t{}\n{}\t{}\n7\t5000022\n",
                       324658, lo, 675344, hi));
  auto edge = run_transform("map", {{"function", "key_mod"}, {"modulus", "65536"}},
                            nums({65535, 65536, -65537, lo}));
  CHECK(lines(edge)
        == fmt::format("65535\t65535\n0\t65536\n65535\t-65537\n0\t{}\n", lo));
}

TEST_CASE("map key_by_value turns values into keys with value 1") {
  // Text and int64 values, each in batches of their own schema.
  auto out = run_transform("map", {{"function", "key_by_value"}},
                           texts({"apple", "pear"}));
  auto ints = run_transform("map", {{"function", "key_by_value"}}, nums({-7}));
  out.insert(out.end(), ints.begin(), ints.end());
  CHECK(lines(out) == "apple\t1\npear\t1\n-7\t1\n");
  for (const auto& r : out)
    CHECK_FALSE(r.is_text);
}

TEST_CASE("map upper, lower and length work on text") {
  auto in = texts({"Hello, World 42_x", "", "\xc3\x84rger"});
  CHECK(text_values(run_transform("map", {{"function", "upper"}}, in))
        == std::vector<std::string>{"HELLO, WORLD 42_X", "", "\xc3\x84RGER"});
  CHECK(text_values(run_transform("map", {{"function", "lower"}}, in))
        == std::vector<std::string>{"hello, world 42_x", "", "\xc3\x84rger"});
  auto lengths = run_transform("map", {{"function", "length"}}, in);
  CHECK(values(lengths) == std::vector<int64_t>{17, 0, 6});
  CHECK_FALSE(lengths[0].is_text);
  CHECK(values(run_transform("map", {{"function", "length"}}, nums({-120})))
        == std::vector<int64_t>{4});
}

TEST_CASE("map square and negate work on numbers") {
  CHECK(values(run_transform("map", {{"function", "square"}}, nums({3, -4, 0})))
        == std::vector<int64_t>{9, 16, 0});
  CHECK(values(run_transform("map", {{"function", "negate"}}, nums({3, -4, 0})))
        == std::vector<int64_t>{-3, 4, 0});
  CHECK(text_values(
          run_transform("map", {{"function", "negate"}}, texts({"a"})))
        == std::vector<std::string>{"a"});
}

TEST_CASE("map square and negate fail on int64 overflow instead of "
          "wrapping") {
  constexpr auto max = std::numeric_limits<int64_t>::max();
  constexpr auto min = std::numeric_limits<int64_t>::min();
  CHECK_THROWS_WITH_AS(
    run_transform("map", {{"function", "square"}}, nums({4294967296})),
    "square: int64 overflow at value 4294967296", operator_error);
  CHECK(values(run_transform("map", {{"function", "square"}},
                             nums({3037000499})))
        == std::vector<int64_t>{9223372030926249001});
  CHECK_THROWS_WITH_AS(
    run_transform("map", {{"function", "negate"}},
                  {record::integer("k", min, 0)}),
    "negate: int64 overflow at key 'k'", operator_error);
  CHECK(values(run_transform("map", {{"function", "negate"}}, nums({max})))
        == std::vector<int64_t>{-max});
}

TEST_CASE("map appends to a non-empty output") {
  // (The caller clears the input batch: operator.hpp.)
  opened_transform t{"map", {{"function", "negate"}}, numbers_rows};
  auto out = to_rows(numbers_rows, nums({100}));
  auto in = to_rows(numbers_rows, nums({1, 2}));
  t.t->process(in, out, false);
  CHECK(values(to_records(out)) == std::vector<int64_t>{100, -1, -2});
}

// -- flat_map -----------------------------------------------------------------

namespace {

/// The tokens of `line`, each followed by '|'.
std::string tokens(const std::string& line) {
  auto out = run_transform("flat_map", {{"function", "tokenize"}},
                           {record::string({}, line, 9)});
  std::string joined;
  for (const auto& r : out) {
    CHECK(r.num == 1);
    CHECK(r.timestamp == 9);
    CHECK_FALSE(r.is_text);
    joined += r.key + "|";
  }
  return joined;
}

} // namespace

TEST_CASE("flat_map tokenize splits like Flink's WordCount") {
  CHECK(tokens("Hello World") == "hello|world|");
  CHECK(tokens("  To be, or not to be: that is the question.  ")
        == "to|be|or|not|to|be|that|is|the|question|");
  CHECK(tokens("snake_case and CamelCase_42")
        == "snake_case|and|camelcase_42|");
  CHECK(tokens("R2-D2 3.14 1e10") == "r2|d2|3|14|1e10|");
  CHECK(tokens("don't--stop!!!") == "don|t|stop|");
  CHECK(tokens("__") == "__|");
  CHECK(tokens("") == "");
  CHECK(tokens("   ") == "");
  CHECK(tokens("...,;!") == "");
  CHECK(tokens("tab\there\nnewline") == "tab|here|newline|");
  // Non-ASCII bytes separate words: "Grüße aus Köln".
  CHECK(tokens("Gr\xc3\xbc\xc3\x9f" "e aus K\xc3\xb6ln") == "gr|e|aus|k|ln|");
  CHECK(tokens("\xe2\x82\xac" "5") == "5|");
}

TEST_CASE("flat_map tokenize handles many lines in one batch") {
  auto out = run_transform("flat_map", {{"function", "tokenize"}},
                           texts({"a b", "", "C"}));
  CHECK(lines(out) == "a\t1\nb\t1\nc\t1\n");
}

TEST_CASE("flat_map split splits on whitespace into unkeyed text") {
  auto out = run_transform("flat_map", {{"function", "split"}},
                           texts({" one  two\tthree\n", "", "x,y"}));
  CHECK(text_values(out)
        == std::vector<std::string>{"one", "two", "three", "x,y"});
}

// -- filter -------------------------------------------------------------------

TEST_CASE("filter functions keep matching records") {
  auto in = nums({-3, -2, 0, 1, 4, 7});
  CHECK(values(run_transform("filter", {{"function", "even"}}, in))
        == std::vector<int64_t>{-2, 0, 4});
  CHECK(values(run_transform("filter", {{"function", "odd"}}, in))
        == std::vector<int64_t>{-3, 1, 7});
  CHECK(values(run_transform(
          "filter", {{"function", "greater_than"}, {"threshold", "0"}}, in))
        == std::vector<int64_t>{1, 4, 7});
  CHECK(values(run_transform(
          "filter", {{"function", "greater_than"}, {"threshold", "-3"}}, in))
        == std::vector<int64_t>{-2, 0, 1, 4, 7});
  auto words = texts({"alpha", "", "beta", "gamma"});
  CHECK(text_values(run_transform("filter", {{"function", "nonempty"}}, words))
        == std::vector<std::string>{"alpha", "beta", "gamma"});
  CHECK(text_values(run_transform(
          "filter", {{"function", "contains"}, {"substring", "ta"}}, words))
        == std::vector<std::string>{"beta"});
  CHECK(values(run_transform(
          "filter", {{"function", "contains"}, {"substring", "7"}}, in))
        == std::vector<int64_t>{7});
  CHECK(run_transform("filter", {{"function", "even"}}, texts({"a"})).empty());
}

// -- keyed aggregation --------------------------------------------------------

namespace {

/// Integer records with the given keys and values, timestamps 1, 2, ...
std::vector<record>
keyed(std::initializer_list<std::pair<const char*, int64_t>> kv) {
  std::vector<record> out;
  int64_t ts = 0;
  for (const auto& [k, v] : kv)
    out.push_back(record::integer(k, v, ++ts));
  return out;
}

} // namespace

TEST_CASE("bounded aggregations emit one sorted record per key at the end") {
  auto in = keyed({{"b", 5}, {"a", 2}, {"b", -1}, {"c", 7}, {"a", 9}});
  auto count = run_transform("count", {}, in);
  CHECK(lines(count) == "a\t2\nb\t2\nc\t1\n");
  CHECK(count[0].timestamp == 5);
  CHECK(count[1].timestamp == 3);
  CHECK(count[2].timestamp == 4);
  CHECK(lines(run_transform("sum", {}, in)) == "a\t11\nb\t4\nc\t7\n");
  CHECK(lines(run_transform("min", {}, in)) == "a\t2\nb\t-1\nc\t7\n");
  CHECK(lines(run_transform("max", {}, in)) == "a\t9\nb\t5\nc\t7\n");
}

TEST_CASE("bounded aggregations hold everything until finish") {
  opened_transform t{"sum", {}, keyed_rows};
  CHECK(t.process(keyed({{"x", 1}, {"y", 2}})).empty());
  CHECK(t.process(keyed({{"x", 10}})).empty());
  CHECK(lines(t.finish()) == "x\t11\ny\t2\n");
}

TEST_CASE("partial aggregates are combined, count adding the partial counts") {
  auto partials = keyed({{"a", 3}, {"b", 2}, {"a", 4}});
  CHECK(lines(run_transform("count", {}, partials, true)) == "a\t7\nb\t2\n");
  CHECK(lines(run_transform("count", {}, partials, false)) == "a\t2\nb\t1\n");
  CHECK(lines(run_transform("sum", {}, partials, true)) == "a\t7\nb\t2\n");
  CHECK(lines(run_transform("min", {}, partials, true)) == "a\t3\nb\t2\n");
  CHECK(lines(run_transform("max", {}, partials, true)) == "a\t4\nb\t2\n");
}

TEST_CASE("sum and count fail on int64 overflow, naming the key") {
  constexpr auto max = std::numeric_limits<int64_t>::max();
  CHECK_THROWS_WITH_AS(run_transform("sum", {}, keyed({{"x", max}, {"x", 1}})),
                       "sum: int64 overflow at key 'x'", operator_error);
  CHECK_THROWS_WITH_AS(
    run_transform("count", {}, keyed({{"y", max}, {"y", 1}}), true),
    "count: int64 overflow at key 'y'", operator_error);
  CHECK(lines(run_transform("sum", {}, keyed({{"x", max}, {"x", -1}})))
        == "x\t" + std::to_string(max - 1) + "\n");
  // The combiner before a hash exchange too; the aggregate stays as it was.
  keyed_aggregation combiner{aggregation_kind::sum, {}, keyed_rows, {0}};
  combiner.add(to_rows({record::integer("z", max, 0)}), false);
  CHECK_THROWS_WITH_AS(combiner.add(to_rows({record::integer("z", 1, 0)}), false),
                       "sum: int64 overflow at key 'z'", operator_error);
  CHECK(lines(drained_sorted(combiner)) == "z\t" + std::to_string(max) + "\n");
  auto long_key = std::string(100, 'k');
  combiner.add(to_rows({record::integer(long_key, max, 0)}), false);
  CHECK_THROWS_WITH_AS(
    combiner.add(to_rows({record::integer(long_key, max, 0)}), false),
                       ("sum: int64 overflow at key '" + std::string(64, 'k')
                        + "...'")
                         .c_str(),
                       operator_error);
}

TEST_CASE("streaming aggregations emit updated keys after every batch") {
  opened_transform t{"count", {}, keyed_rows, false};
  CHECK(lines(t.process(keyed({{"b", 1}, {"a", 1}, {"b", 1}})))
        == "b\t2\na\t1\n");
  CHECK(lines(t.process(keyed({{"a", 1}, {"c", 1}}))) == "a\t2\nc\t1\n");
  CHECK(t.process({}).empty());
  CHECK(t.finish().empty());
}

TEST_CASE("keyed_aggregation works as a combiner") {
  CHECK(parse_aggregation_kind("count") == aggregation_kind::count);
  CHECK(parse_aggregation_kind("max") == aggregation_kind::max);
  CHECK(parse_aggregation_kind("avg") == aggregation_kind::avg);
  CHECK_FALSE(parse_aggregation_kind("median").has_value());
  CHECK(to_string(aggregation_kind::sum) == "sum");

  keyed_aggregation combiner{aggregation_kind::count, {}, keyed_rows, {0}};
  combiner.add(to_rows(keyed({{"x", 0}, {"y", 0}, {"x", 0}})), false);
  CHECK(combiner.size() == 2);
  row_batch partials{combiner.output()};
  combiner.drain(partials);
  CHECK(combiner.size() == 0);
  CHECK(partials.rows == 2);
  combiner.add(to_rows(keyed({{"x", 0}})), false);
  combiner.drain(partials);

  // The downstream count adds the partial counts.
  keyed_aggregation total{aggregation_kind::count, {}, keyed_rows, {0}};
  total.add(partials, true);
  auto out = drained_sorted(total);
  CHECK(lines(out) == "x\t3\ny\t1\n");
  CHECK(out[0].timestamp == 3);
}

TEST_CASE("keyed_aggregation reuses its table after a drain") {
  keyed_aggregation agg{aggregation_kind::sum, {}, keyed_rows, {0}};
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 1000; ++i)
      agg.add(to_rows({record::integer("k" + std::to_string(i % 100), 1)}),
              false);
    CHECK(agg.size() == 100);
    row_batch out{agg.output()};
    agg.drain(out);
    CHECK(out.rows == 100);
    for (const auto& r : to_records(out))
      CHECK(r.num == 10);
  }
}

// -- word count on Flink's test data ------------------------------------------

TEST_CASE("tokenize and count reproduce Flink's WordCount on faust.txt") {
  auto data = testdata_dir();
  REQUIRE_MESSAGE(!data.empty(),
                  "shared/testdata not found (set WEIR_TESTDATA)");
  auto text = (data / "flink-wordcount/faust.txt").string();
  auto expected = read_file(data / "flink-wordcount/faust.expected");

  // Three source instances, combiners, one final count, as a job would.
  keyed_aggregation final_count{aggregation_kind::count, {}, keyed_rows, {0}};
  opened_transform tok{"flat_map", {{"function", "tokenize"}}, lines_rows};
  REQUIRE(tok.output == keyed_rows);
  for (int32_t i = 0; i < 3; ++i) {
    opened_source src{"text_file", {{"path", text}}, i, 3};
    while (src.next(16)) {
    }
    row_batch words{keyed_rows};
    tok.t->process(src.out, words, false);
    keyed_aggregation combiner{aggregation_kind::count, {}, keyed_rows, {0}};
    combiner.add(words, false);
    row_batch partials{combiner.output()};
    combiner.drain(partials);
    final_count.add(partials, true);
  }
  auto counts = drained_sorted(final_count);
  std::string actual;
  for (const auto& r : counts)
    actual += r.key + " " + std::to_string(r.num) + "\n";
  CHECK(counts.size() == 418);
  CHECK(actual == expected);
}

// -- sinks --------------------------------------------------------------------

TEST_CASE("text_file sink writes an in-progress file and renames it") {
  // Rows of one schema (before rows, one batch mixed keyed and unkeyed,
  // text and int64 records): keyed text rows, in two batches.
  temp_dir dir;
  auto path = dir / "out.txt";
  auto s = reg().find("text_file")->make_sink({{"path", path}});
  CHECK(s->blocking_io());
  s->open(sink_context(keyed_lines_rows));
  s->write(to_rows(keyed_lines_rows, {record::string("a", "1"),
                                      record::string("k", "plain text")}));
  s->write(to_rows(keyed_lines_rows, {record::string("z", "-5")}));
  CHECK(fs::exists(path + ".inprogress"));
  CHECK_FALSE(fs::exists(path));
  s->finish();
  CHECK_FALSE(fs::exists(path + ".inprogress"));
  CHECK(read_file(path) == "a\t1\nk\tplain text\nz\t-5\n");
  s.reset();
  CHECK(fs::exists(path));
}

TEST_CASE("text_file sink with no records writes an empty file") {
  temp_dir dir;
  auto path = dir / "empty.txt";
  auto s = reg().find("text_file")->make_sink({{"path", path}});
  s->open(sink_context(numbers_rows));
  s->finish();
  CHECK(fs::exists(path));
  CHECK(read_file(path).empty());
}

TEST_CASE("text_file sink writes large outputs completely") {
  temp_dir dir;
  auto path = dir / "big.txt";
  auto s = reg().find("text_file")->make_sink({{"path", path}});
  s->open(sink_context(keyed_rows));
  std::string expected;
  for (int b = 0; b < 100; ++b) {
    std::vector<record> batch;
    for (int i = 0; i < 1000; ++i)
      batch.push_back(record::integer("key", b * 1000 + i));
    expected += lines(batch);
    s->write(to_rows(keyed_rows, batch));
  }
  s->finish();
  CHECK(read_file(path) == expected);
}

TEST_CASE("text_file sink with parallelism > 1 writes part files") {
  temp_dir dir;
  auto path = dir / "out";
  std::vector<std::unique_ptr<sink>> sinks;
  for (int32_t i = 0; i < 3; ++i) {
    sinks.push_back(reg().find("text_file")->make_sink({{"path", path}}));
    sinks.back()->open(sink_context(numbers_rows, i, 3));
    sinks.back()->write(test::numbers({i}));
  }
  CHECK(fs::is_directory(path));
  CHECK(fs::exists(path + "/part-1.inprogress"));
  for (auto& s : sinks)
    s->finish();
  for (int32_t i = 0; i < 3; ++i)
    CHECK(read_file(path + "/part-" + std::to_string(i))
          == std::to_string(i) + "\n");
  CHECK(std::distance(fs::directory_iterator{path}, fs::directory_iterator{})
        == 3);
}

TEST_CASE("text_file sink leaves no output after abort or destruction") {
  temp_dir dir;
  auto path = dir / "out.txt";
  {
    auto s = reg().find("text_file")->make_sink({{"path", path}});
    s->open(sink_context(numbers_rows));
    s->write(test::numbers({1}));
    s->abort();
    CHECK_FALSE(fs::exists(path + ".inprogress"));
    CHECK_FALSE(fs::exists(path));
    s->abort(); // twice is harmless
  }
  {
    auto s = reg().find("text_file")->make_sink({{"path", path}});
    s->open(sink_context(numbers_rows));
    s->write(test::numbers({1}));
  } // destroyed without finish
  CHECK(fs::is_empty(dir.path));
}

TEST_CASE("text_file sink: a stale attempt never touches a newer one's file") {
  // The old attempt of a restarted job may still run on a worker that was
  // declared lost (hung, cut off) when the new attempt opens the same file.
  temp_dir dir;
  auto path = dir / "out.txt";
  auto stale = reg().find("text_file")->make_sink({{"path", path}});
  stale->open(sink_context(numbers_rows));
  stale->write(test::numbers({1}));
  auto fresh = reg().find("text_file")->make_sink({{"path", path}});
  fresh->open(sink_context(numbers_rows));
  fresh->write(test::numbers({2}));
  stale->abort(); // canceled once its worker notices
  CHECK(fs::exists(path + ".inprogress"));
  fresh->finish();
  CHECK(read_file(path) == "2\n");
  // A stale attempt that gets to its end cannot publish either.
  auto first = reg().find("text_file")->make_sink({{"path", path}});
  first->open(sink_context(numbers_rows));
  first->write(test::numbers({3}));
  auto second = reg().find("text_file")->make_sink({{"path", path}});
  second->open(sink_context(numbers_rows));
  second->write(test::numbers({4}));
  CHECK_THROWS_WITH_AS(first->finish(),
                       doctest::Contains("replaced by another attempt"),
                       operator_error);
  second->finish();
  CHECK(read_file(path) == "4\n");
  CHECK_FALSE(fs::exists(path + ".inprogress"));
}

TEST_CASE("text_file sink throws when it cannot create its file") {
  auto s = reg().find("text_file")->make_sink({{"path", "/no/such/dir/out"}});
  CHECK_THROWS_WITH_AS(s->open(sink_context(numbers_rows)),
                       doctest::Contains("/no/such/dir/out.inprogress"),
                       operator_error);
}

TEST_CASE("stdout sink and text_file '-' write whole lines to stdout") {
  // Each sink on rows of one schema (before rows, one batch mixed keyed
  // int64 and unkeyed text records).
  auto out = capture_stdout([] {
    auto s = reg().find("stdout")->make_sink({});
    CHECK(s->blocking_io());
    s->open(sink_context(keyed_rows));
    s->write(test::keyed({{"k", 3}}));
    s->write(row_batch{keyed_rows});
    auto dash = reg().find("text_file")->make_sink({{"path", "-"}});
    dash->open(sink_context(lines_rows));
    dash->write(test::lines({"hello", "7"}));
    dash->finish();
  });
  CHECK(out == "k\t3\nhello\n7\n");
}

TEST_CASE("discard sink drops records and reports its delay") {
  auto s = reg().find("discard")->make_sink({});
  s->write(test::numbers({1}));
  CHECK(s->delay_per_batch().count() == 0);
  CHECK(s->collected() == nullptr);
  auto slow = reg().find("discard")->make_sink({{"delay_ms", "25"}});
  CHECK(slow->delay_per_batch() == std::chrono::milliseconds{25});
  CHECK_FALSE(s->blocking_io());
  CHECK(slow->blocking_io()); // it sleeps in write(): a thread of its own
}

TEST_CASE("collect sink keeps rows of any schema for the runtime") {
  auto s = reg().find("collect")->make_sink({});
  auto ctx = sink_context(keyed_lines_rows);
  ctx.vertex_id = "out";
  s->open(ctx);
  s->write(to_rows(keyed_lines_rows, {record::string("a", "1")}));
  s->write(to_rows(keyed_lines_rows, {record::string({}, "b")}));
  REQUIRE(s->collected() != nullptr);
  CHECK(*s->collected()
        == test::table_of({record::string("a", "1"), record::string({}, "b")}));
  // The runtime moves the rows out and leaves the table empty.
  s->collected()->rows.reset(keyed_lines_rows);
  s->write(to_rows(keyed_lines_rows, {record::string({}, "2")}));
  CHECK(*s->collected()
        == collected_table{"out", keyed_lines_rows,
                           to_rows(keyed_lines_rows,
                                   {record::string({}, "2")})});
  // Any schema comes as it is, typed.
  auto parsed = parse_schema("user: string, bytes: int64, ok: bool?");
  REQUIRE(parsed.problem.empty());
  auto typed = reg().find("collect")->make_sink({});
  auto typed_ctx = sink_context(parsed.value);
  typed_ctx.vertex_id = "typed";
  typed->open(typed_ctx);
  row_batch b{parsed.value};
  b.columns[0].push_str("ann");
  b.columns[1].push_int(12);
  b.columns[2].push_null();
  ++b.rows;
  typed->write(b);
  CHECK(*typed->collected() == collected_table{"typed", parsed.value, b});
}

// -- checkpointed state ---------------------------------------------------------

namespace {

/// Reads `first` records from a fresh instance, snapshots it, and reads the
/// rest from another instance restored from that snapshot.
std::vector<record> resumed_source(const std::string& name, const params& p,
                                   size_t first, int32_t index = 1,
                                   int32_t parallelism = 3) {
  opened_source a{name, p, index, parallelism};
  a.next(first);
  auto out = a.records();
  auto state = a.src->snapshot_state();
  opened_source b{name, p, index, parallelism};
  b.src->restore_state(state);
  while (b.next(5)) {
  }
  auto rest = b.records();
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

} // namespace

TEST_CASE("a restored sequence source continues where its snapshot was") {
  params p{{"from", "1"}, {"to", "100"}};
  CHECK(resumed_source("sequence", p, 4) == run_source("sequence", p, 1, 3));
}

TEST_CASE("a restored generator continues where its snapshot was") {
  params p{{"count", "50"}, {"keys", "4"}};
  auto whole = run_source("generator", p, 1, 3);
  auto resumed = resumed_source("generator", p, 6);
  REQUIRE(resumed.size() == whole.size());
  for (size_t i = 0; i < whole.size(); ++i) {
    CHECK(resumed[i].key == whole[i].key);
    CHECK(resumed[i].num == whole[i].num);
  }
}

TEST_CASE("text_file's delivery parameter is checked") {
  CHECK(check_text_file_sink_params({{"path", "/tmp/x"}, {"delivery", "twice"}})
        == "parameter 'delivery': expected at-least-once or exactly-once, got "
           "'twice'");
  CHECK(check_text_file_sink_params({{"path", "-"}, {"delivery", "exactly-once"}})
        == "parameter 'delivery': exactly-once needs a directory 'path', not "
           "'-'");
  CHECK(check_text_file_sink_params({{"path", "/tmp/x"},
                                     {"delivery", "exactly-once"}})
        == "");
}

TEST_CASE("sinks declare what their output guarantees") {
  auto& reg = registry::builtin();
  CHECK(reg.guarantee_of("collect", {}) == sink_guarantee::collected_by_job_master);
  CHECK(reg.guarantee_of("discard", {{"delay_ms", "5"}})
        == sink_guarantee::discarded);
  CHECK(reg.guarantee_of("stdout", {}) == sink_guarantee::external_at_least_once);
  CHECK(reg.guarantee_of("text_file", {{"path", "out"}})
        == sink_guarantee::external_at_least_once);
  CHECK(reg.guarantee_of("text_file",
                         {{"path", "out"}, {"delivery", "exactly-once"}})
        == sink_guarantee::external_exactly_once);
  // A user library's sink (not in the built-in registry) gets the default.
  CHECK(reg.guarantee_of("my_sink", {}) == sink_guarantee::external_at_least_once);
}

// -- names of user code ---------------------------------------------------------

TEST_CASE("demangle: symbols and type names as written, others unchanged") {
  CHECK(ops::demangle("St16invalid_argument") == "std::invalid_argument");
  CHECK(ops::demangle("_ZN4weir3ops8registry3addENS0_16operator_factoryE")
        == "weir::ops::registry::add(weir::ops::operator_factory)");
  CHECK(ops::demangle("weir_plugin_register") == "weir_plugin_register");
  CHECK(ops::demangle_symbols("lib.so: undefined symbol: _ZN4weir1fEv")
        == "lib.so: undefined symbol: weir::f()");
  // Only words that start with _Z, and a bad one stays as it is.
  CHECK(ops::demangle_symbols("a_Zb _Zbogus, (_ZN1a1bEv)")
        == "a_Zb _Zbogus, (a::b())");
}

TEST_CASE("describe_current_exception: the demangled type and the message") {
  auto described = [](auto&& thrower) {
    try {
      thrower();
    } catch (...) {
      return ops::describe_current_exception();
    }
    return std::string{"nothing thrown"};
  };
  CHECK(described([] { (void)std::stoll("x"); })
        == "std::invalid_argument: stoll");
  CHECK(described([] { throw ops::operator_error("no tab"); })
        == "weir::ops::operator_error: no tab");
  CHECK(described([] { throw 42; }) == "int");
}

TEST_CASE("elements continue at another parallelism, each element once") {
  std::string values = "[";
  for (int i = 0; i < 23; ++i)
    values += (i > 0 ? "," : "") + std::to_string(i);
  values += "]";
  params p{{"values", values}};
  for (int32_t to : {1, 3, 5}) {
    CAPTURE(to);
    // Two subtasks emit a few elements each, then snapshot.
    std::multiset<std::string> seen;
    std::vector<std::string> old_states;
    for (int32_t i = 0; i < 2; ++i) {
      opened_source s{"elements", p, i, 2};
      s.next(static_cast<size_t>(3 + i));
      for (auto& r : s.records())
        seen.insert(lines({r}));
      old_states.push_back(s.src->snapshot_state());
    }
    for (int32_t i = 0; i < to; ++i) {
      opened_source s{"elements", p, i, to};
      s.src->restore_rescaled(old_states);
      while (s.next(4)) {
      }
      for (auto& r : s.records())
        seen.insert(lines({r}));
    }
    std::multiset<std::string> all;
    opened_source whole{"elements", p};
    while (whole.next(100)) {
    }
    for (auto& r : whole.records())
      all.insert(lines({r}));
    CHECK(seen == all);
  }
}

TEST_CASE("parse keeps its counts across a rescale, each old subtask's once") {
  params p{{"schema", "n:int"}, {"on_error", "skip"}};
  auto input = default_schema::lines();
  std::vector<std::string> old_states;
  std::string first_note;
  for (auto* line : {"x", "7"}) {
    opened_transform t{"parse", p, input};
    t.process({record::string({}, line), record::string({}, "y")});
    old_states.push_back(t.t->snapshot_state());
    if (first_note.empty())
      first_note = t.t->skip_note();
  }
  REQUIRE_FALSE(first_note.empty());
  // One subtask now: it takes both old subtasks' counts.
  opened_transform merged{"parse", p, input};
  merged.t->restore_rescaled(old_states);
  CHECK(merged.t->rows_skipped() == 3);
  CHECK(merged.t->skip_note() == first_note);
}
