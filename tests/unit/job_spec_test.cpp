#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

#include <doctest/doctest.h>

#include "plan/chaining.hpp"
#include "plan/job_spec.hpp"
#include "plan/validation.hpp"
#include "messages/errors.hpp"

namespace fs = std::filesystem;
using namespace weir;

namespace {

/// What every "unknown operator" error adds.
constexpr const char* unknown_hint
  = " (not built in: an operator of a user library needs --libjars LIB, "
    "and weir info --libjars LIB lists them)";

using arg_map = std::map<std::string, std::string>;

/// A fresh directory for this test process's spec files.
const fs::path& temp_dir() {
  static const fs::path dir = [] {
    auto d = fs::temp_directory_path()
             / ("weir_job_spec_test_" + std::to_string(::getpid()));
    fs::create_directories(d);
    return d;
  }();
  return dir;
}

/// The project root: the first ancestor of the working directory that holds
/// examples/wordcount.json (tests run from the root or a build directory).
fs::path project_root() {
  for (auto d = fs::current_path(); !d.empty(); d = d.parent_path()) {
    if (fs::exists(d / "examples" / "wordcount.json"))
      return d;
    if (d == d.parent_path())
      break;
  }
  FAIL("cannot find examples/wordcount.json above the working directory");
  return {};
}

std::string example(const std::string& name) {
  return (project_root() / "examples" / name).string();
}

/// Writes `text` to <temp>/x.json and returns the path.
std::string write_spec(const std::string& text) {
  auto path = temp_dir() / "x.json";
  std::ofstream{path} << text;
  return path.string();
}

/// The error message with the temporary directory cut off, so that it starts
/// with "x.json".
std::string strip_dir(std::string msg) {
  auto prefix = (temp_dir() / "").string();
  if (msg.compare(0, prefix.size(), prefix) == 0)
    msg.erase(0, prefix.size());
  return msg;
}

/// Parses and resolves `text`; returns the error ("" when it succeeds).
std::string problem(const std::string& text, const arg_map& args = {},
                    std::optional<int32_t> p = std::nullopt) {
  auto spec = parse_job_spec(write_spec(text));
  if (!spec)
    return strip_dir(describe(spec.error()));
  auto g = resolve_job_graph(*spec, args, p);
  return g ? std::string{} : strip_dir(describe(g.error()));
}

/// A valid job around the given vertices and edges (JSON array bodies).
std::string job(const std::string& vertices, const std::string& edges) {
  return R"({"name": "t", "vertices": [)" + vertices + R"(], "edges": [)"
         + edges + "]}";
}

const std::string seq_v
  = R"({"id": "src", "operator": "sequence", "params": {"from": 1, "to": 10}})";
const std::string out_v = R"({"id": "out", "operator": "discard"})";

job_graph make_graph(std::vector<std::pair<std::string, int32_t>> vertices,
                     std::vector<edge_spec> edges) {
  job_graph g;
  g.name = "g";
  for (auto& [id, p] : vertices)
    g.vertices.push_back(vertex_spec{id, "map", {}, p});
  g.edges = std::move(edges);
  return g;
}

} // namespace

TEST_CASE("syntax errors name the line and column") {
  CHECK(problem("{\n  \"name\": \"x\",\n  \"vertices\": [\n    {\"id\": \"a\",}\n"
                "  ]\n}")
        == "x.json:4:16: syntax error: unexpected '}'; expected string "
           "literal");
  CHECK(problem("{\"name\": \"x\",\n")
        == "x.json:2:1: syntax error: unexpected end of input; expected "
           "string literal");
  // The position is the offending token's last character; columns count
  // characters, not UTF-8 bytes.
  CHECK(problem("{\"name\": \"é\" \"vertices\": []}")
        == "x.json:1:23: syntax error: unexpected string literal; expected "
           "'}'");
  // A token cut by a line break is reported at the end of its line.
  CHECK(problem("{\"a\": tru\n}")
        == "x.json:1:10: syntax error: invalid literal; last read: '\"a\": "
           "tru<U+000A>'");
}

TEST_CASE("names longer than 256 bytes are refused without echoing them") {
  auto spec = [](const std::string& name, const std::string& id) {
    return R"({"name": ")" + name + R"(", "vertices": [{"id": ")" + id
           + R"(", "operator": "sequence", "params": {"from": 1, "to": 2}},
              {"id": "out", "operator": "collect"}],
              "edges": [{"from": ")" + id + R"(", "to": "out"}]})";
  };
  CHECK(problem(spec(std::string(300, 'n'), "a"))
        == "x.json: name: 300 bytes, more than the 256 allowed");
  CHECK(problem(spec("j", std::string(10 << 20, 'v')))
        == "x.json: vertices[0].id: 10485760 bytes, more than the 256 "
           "allowed");
  CHECK(problem(spec(std::string(256, 'n'), std::string(255, 'v'))).empty());
  // A vertex id is also a file name (it names state files): 255 bytes.
  CHECK(problem(spec("j", std::string(256, 'v')))
        == "x.json: vertex id '" + std::string(64, 'v')
             + "...' (256 bytes) is not a file name");
}

TEST_CASE("a missing file is reported with the system's reason") {
  auto path = (temp_dir() / "missing.json").string();
  auto spec = parse_job_spec(path);
  REQUIRE(!spec);
  CHECK(describe(spec.error())
        == path + ": cannot read file: No such file or directory");
  CHECK(spec.error().code() == static_cast<uint8_t>(errc::invalid_job));
}

TEST_CASE("required fields and their types") {
  CHECK(problem("[]")
        == "x.json: expected an object at the top level, got an array");
  CHECK(problem(R"({"vertices": []})") == "x.json: name: missing");
  CHECK(problem(R"({"name": 7, "vertices": []})")
        == "x.json: name: expected a string, got a number (7)");
  CHECK(problem(R"({"name": "t"})") == "x.json: vertices: missing");
  CHECK(problem(R"({"name": "t", "vertices": {}})")
        == "x.json: vertices: expected an array, got an object");
  CHECK(problem(job(seq_v + R"(, {"operator": "count"})", ""))
        == "x.json: vertices[1].id: missing");
  CHECK(problem(job(seq_v + ", " + out_v + R"(, {"id": "c"})", ""))
        == "x.json: vertices[2].operator: missing");
  CHECK(problem(job(R"({"id": "", "operator": "count"})", ""))
        == "x.json: vertices[0].id: must not be empty");
  CHECK(problem(R"({"name": "t", "parallelism": "two", "vertices": []})")
        == "x.json: parallelism: expected an integer, got a string (\"two\")");
  CHECK(problem(job(R"({"id": "a", "operator": "count", "parallelism": 1.5})",
                    ""))
        == "x.json: vertices[0].parallelism: expected an integer, got a "
           "number (1.5)");
  CHECK(problem(job(R"({"id": "a", "operator": "map", "params": {"f": [1]}})",
                    ""))
        == "x.json: vertices[0].params.f: expected a string, number or bool, "
           "got an array");
  CHECK(problem(job(seq_v, R"({"from": "src"})"))
        == "x.json: edges[0].to: missing");
  CHECK(problem(job(seq_v, "7")) == "x.json: edges[0]: expected an object, "
                                    "got a number (7)");
}

TEST_CASE("unknown fields are rejected, naming the known ones") {
  CHECK(problem(R"({"name": "t", "paralelism": 2, "vertices": []})")
        == "x.json: paralelism: unknown field (known: name, parallelism, "
           "params, vertices, edges, config)");
  CHECK(problem(job(R"({"id": "a", "operator": "count", "paralelism": 2})",
                    ""))
        == "x.json: vertices[0].paralelism: unknown field (known: id, "
           "operator, params, parallelism, watermarks)");
}

TEST_CASE("unknown partitioning") {
  CHECK(problem(job(seq_v + ", " + out_v,
                    R"({"from": "src", "to": "out", "partitioning": "shuffle"})"))
        == "x.json: edges[0].partitioning: unknown partitioning 'shuffle' "
           "(known: forward, hash, rebalance, broadcast)");
}

TEST_CASE("parallelism must be in [1, 32768]") {
  CHECK(problem(job(R"({"id": "lines", "operator": "sequence", "parallelism": 0})",
                    ""))
        == "x.json: vertices[0] ('lines'): parallelism 0 is outside [1, 32768]");
  CHECK(problem(job(seq_v + R"(, {"id": "w", "operator": "count", "parallelism": 40000})",
                    ""))
        == "x.json: vertices[1] ('w'): parallelism 40000 is outside [1, "
           "32768]");
  CHECK(problem(R"({"name": "t", "parallelism": -3, "vertices": []})")
        == "x.json: parallelism -3 is outside [1, 32768]");
  CHECK(problem(job(seq_v, ""), {}, 0)
        == "x.json: default parallelism (-p) 0 is outside [1, 32768]");
}

TEST_CASE("shape errors carry the file name") {
  CHECK(problem(R"({"name": "t", "vertices": []})")
        == "x.json: job has no vertices");
  CHECK(problem(job(seq_v + ", " + out_v,
                    R"({"from": "src", "to": "nowhere", "partitioning": "hash"})"))
        == "x.json: edge 'src' -> 'nowhere': no vertex 'nowhere'");
  CHECK(problem(job(seq_v + R"(, {"id": "a", "operator": "map"},
                               {"id": "b", "operator": "map"})",
                    R"({"from": "src", "to": "a", "partitioning": "hash"},
                       {"from": "a", "to": "b", "partitioning": "hash"},
                       {"from": "b", "to": "a", "partitioning": "hash"})"))
        == "x.json: vertex 'a': part of a cycle");
  CHECK(problem(job(seq_v + R"(, {"id": "out", "operator": "discard", "parallelism": 2})",
                    R"({"from": "src", "to": "out", "partitioning": "forward"})"))
        == "x.json: edge 'src' -> 'out': forward partitioning needs equal "
           "parallelism, but 'src' has 1 and 'out' has 2");
}

TEST_CASE("job parameters and program arguments") {
  auto with_params = R"({"name": "t", "params": {"n": 10, "on": true},
    "vertices": [
      {"id": "src", "operator": "sequence", "params": {"from": 1, "to": "${n}"}},
      {"id": "out", "operator": "discard"}],
    "edges": [{"from": "src", "to": "out", "partitioning": "forward"}]})";
  auto spec = parse_job_spec(write_spec(with_params));
  REQUIRE(spec);
  CHECK(spec->params == arg_map{{"n", "10"}, {"on", "true"}});
  CHECK(param_names(*spec) == std::vector<std::string>{"n", "on"});
  CHECK(spec->vertices[0].params.at("from") == "1");
  auto g = resolve_job_graph(*spec, {{"n", "99"}}, std::nullopt);
  REQUIRE(g);
  CHECK(g->vertices[0].params == arg_map{{"from", "1"}, {"to", "99"}});
  auto bad = resolve_job_graph(*spec, {{"size", "3"}}, std::nullopt);
  REQUIRE(!bad);
  CHECK(strip_dir(describe(bad.error()))
        == "x.json: program argument '--size': not a parameter of the job "
           "(known: n, on)");
  CHECK(problem(job(R"({"id": "lines", "operator": "text_file", "params": {"path": "${inptu}"}})",
                    ""))
        == "x.json: vertices[0] ('lines'): parameter 'path': unknown job "
           "parameter '${inptu}' (the job has no parameters)");
  CHECK(problem(job(seq_v, ""), {{"x", "1"}})
        == "x.json: program argument '--x': not a parameter of the job (the "
           "job has no parameters)");
  CHECK(problem(R"({"name": "t", "params": {"a b": 1}, "vertices": []})")
        == "x.json: params.a b: invalid parameter name (use letters, digits, "
           "'_', '-' and '.')");
}

TEST_CASE("program arguments are --name value or --name=value") {
  auto args = parse_program_args({"--input", "a.txt", "--output=-"});
  REQUIRE(args);
  CHECK(*args == arg_map{{"input", "a.txt"}, {"output", "-"}});
  auto bad = parse_program_args({"input", "a.txt"});
  REQUIRE(!bad);
  CHECK(describe(bad.error())
        == "program argument 'input': expected --name value or --name=value");
  auto dangling = parse_program_args({"--input"});
  REQUIRE(!dangling);
  CHECK(describe(dangling.error())
        == "program argument '--input': missing value");
}

TEST_CASE("an edge without partitioning is forward or rebalance") {
  auto spec = parse_job_spec(write_spec(job(
    seq_v + R"(, {"id": "m", "operator": "map", "params": {"function": "identity"}},
               {"id": "out", "operator": "discard", "parallelism": 3})",
    R"({"from": "src", "to": "m"}, {"from": "m", "to": "out"})")));
  REQUIRE(spec);
  auto g = resolve_job_graph(*spec, {}, std::nullopt);
  REQUIRE(g);
  CHECK(g->edges[0].part == partitioning::forward);
  CHECK(g->edges[1].part == partitioning::rebalance);
}

TEST_CASE("operator problems come from the registry") {
  auto words = R"({"id": "words", "operator": "flat_map",
                    "params": {"function": "tokenise"}})";
  CHECK(problem(job(seq_v + ", " + words + ", " + out_v,
                    R"({"from": "src", "to": "words", "partitioning": "forward"},
                       {"from": "words", "to": "out", "partitioning": "forward"})"))
        == "x.json: vertices[1] ('words'): parameter 'function': unknown "
           "flat_map function 'tokenise' (known: split, tokenize; an operator "
           "of a user library is a step of its own: \"operator\": "
           "\"tokenise\", in C++ .apply(\"tokenise\"))");
  CHECK(problem(job(R"({"id": "c", "operator": "count"}, )" + out_v,
                    R"({"from": "c", "to": "out", "partitioning": "forward"})"))
        == "x.json: vertices[0] ('c'): operator 'count' cannot be a source");
  CHECK(problem(job(seq_v + R"(, {"id": "x", "operator": "frobnicate"})",
                    R"({"from": "src", "to": "x", "partitioning": "forward"})"))
        == "x.json: vertices[1] ('x'): unknown operator 'frobnicate'"
           + std::string{unknown_hint});
}

TEST_CASE("wordcount resolves with --input and -p") {
  auto spec = parse_job_spec(example("wordcount.json"));
  REQUIRE(spec);
  CHECK(spec->name == "wordcount");
  CHECK(spec->parallelism == 2);
  CHECK(param_names(*spec) == std::vector<std::string>{"input", "output"});
  auto input = example("data/sample.txt");
  auto g = resolve_job_graph(*spec, {{"input", input}}, std::nullopt);
  REQUIRE(g);
  CHECK(!g->id.valid());
  CHECK(g->name == "wordcount");
  REQUIRE(g->vertices.size() == 4);
  // Output schemas are the built-in operators' (schemas_test.cpp tests
  // their derivation): every vertex but the sink has one.
  auto& v = g->vertices;
  CHECK(v[0]
        == vertex_spec{"lines", "text_file", {{"path", input}}, 2,
                       v[0].output});
  CHECK(v[1]
        == vertex_spec{"words", "flat_map", {{"function", "tokenize"}}, 2,
                       v[1].output});
  CHECK(v[2] == vertex_spec{"counts", "count", {}, 2, v[2].output});
  CHECK(v[3] == vertex_spec{"out", "text_file", {{"path", "-"}}, 1});
  CHECK(!v[0].output.empty());
  CHECK(!v[1].output.empty());
  CHECK(!v[2].output.empty());
  // A hash edge of today's specs is keyed by the field 'key'.
  CHECK(g->edges
        == std::vector<edge_spec>{{"lines", "words", partitioning::forward},
                                  {"words", "counts", partitioning::hash,
                                   {"key"}},
                                  {"counts", "out", partitioning::rebalance}});
  auto p3 = resolve_job_graph(*spec, {{"input", input}}, 3);
  REQUIRE(p3);
  CHECK(p3->vertices[0].parallelism == 3);
  CHECK(p3->vertices[2].parallelism == 3);
  CHECK(p3->vertices[3].parallelism == 1); // vertex-level wins over -p
}

TEST_CASE("every example resolves") {
  auto input = example("data/sample.txt");
  for (auto name : {"wordcount.json", "keyed_sum.json", "pipeline.json",
                    "collect.json"}) {
    CAPTURE(name);
    auto spec = parse_job_spec(example(name));
    REQUIRE_MESSAGE(spec, describe(spec.error()));
    arg_map args;
    if (spec->params.count("input") > 0)
      args["input"] = input;
    auto g = resolve_job_graph(*spec, args, std::nullopt);
    CHECK_MESSAGE(g, (g ? "" : describe(g.error())));
  }
}

TEST_CASE("chains on wordcount: lines+words, counts, out") {
  auto spec = parse_job_spec(example("wordcount.json"));
  REQUIRE(spec);
  auto g = resolve_job_graph(*spec, {{"input", example("data/sample.txt")}},
                             std::nullopt);
  REQUIRE(g);
  CHECK(compute_chains(*g)
        == std::vector<std::vector<int32_t>>{{0, 1}, {2}, {3}});
  CHECK(is_chained(*g, g->edges[0]));
  CHECK(!is_chained(*g, g->edges[1]));
}

TEST_CASE("chains stop at a vertex with two inputs or two outputs") {
  // a -> c, b -> c (forward, all p=2): c has two inputs, nothing chains.
  // c -> d forward: chained. d -> e, d -> f: d has two outputs.
  auto g = make_graph({{"a", 2}, {"b", 2}, {"c", 2}, {"d", 2}, {"e", 2}, {"f", 2}},
                      {{"a", "c", partitioning::forward},
                       {"b", "c", partitioning::forward},
                       {"c", "d", partitioning::forward},
                       {"d", "e", partitioning::forward},
                       {"d", "f", partitioning::forward}});
  REQUIRE_FALSE(check_job_graph_shape(g));
  CHECK(compute_chains(g)
        == std::vector<std::vector<int32_t>>{{0}, {1}, {2, 3}, {4}, {5}});
  // A long chain listed out of order still comes out upstream first.
  auto h = make_graph({{"z", 1}, {"y", 1}, {"x", 1}},
                      {{"x", "y", partitioning::forward},
                       {"y", "z", partitioning::forward}});
  CHECK(compute_chains(h) == std::vector<std::vector<int32_t>>{{2, 1, 0}});
}

TEST_CASE("describe_plan") {
  auto spec = parse_job_spec(example("wordcount.json"));
  REQUIRE(spec);
  // The registry checks that the input exists, so resolve with the full path
  // and print the relative one, as when run from the project root.
  auto g = resolve_job_graph(*spec, {{"input", example("data/sample.txt")}},
                             std::nullopt);
  REQUIRE(g);
  g->vertices[0].params["path"] = "examples/data/sample.txt";
  // The schemas as the default ones; the built-in operators' own are
  // tested with them.
  g->vertices[0].output = default_schema::keyed_lines();
  g->vertices[1].output = default_schema::keyed_lines();
  g->vertices[2].output = default_schema::keyed_numbers();
  CHECK(describe_plan(*g)
        == "Job 'wordcount': 4 vertices, 3 tasks, 5 subtasks\n"
           "Vertices:\n"
           "  lines   source     text_file  parallelism 2  "
           "path=examples/data/sample.txt\n"
           "  words   transform  flat_map   parallelism 2  function=tokenize\n"
           "  counts  transform  count      parallelism 2\n"
           "  out     sink       text_file  parallelism 1  path=-\n"
           "Tasks (operator chains):\n"
           "  task 1  parallelism 2  lines -> words\n"
           "  task 2  parallelism 2  counts\n"
           "  task 3  parallelism 1  out\n"
           "Edges:\n"
           "  lines -> words   forward        (key: string, value: string)  "
           "chained\n"
           "  words -> counts  hash by (key)  (key: string, value: string)\n"
           "  counts -> out    rebalance      (key: string, value: int64)\n");
  auto one = make_graph({{"only", 1}}, {});
  one.vertices[0].params = {{"text", "a b"}, {"empty", ""}};
  CHECK(describe_plan(one)
        == "Job 'g': 1 vertex, 1 task, 1 subtask\n"
           "Vertices:\n"
           "  only  source  map  parallelism 1  empty=\"\" text=\"a b\"\n"
           "Tasks (operator chains):\n"
           "  task 1  parallelism 1  only\n"
           "Edges:\n"
           "  (none)\n");
}

namespace {

/// A source reading `path`, a count, and a sink, as a JobGraph.
job_graph file_count_graph(const std::string& path) {
  job_graph g;
  g.name = "g";
  g.vertices = {vertex_spec{"lines", "text_file", {{"path", path}}, 1},
                vertex_spec{"c", "count", {}, 1},
                vertex_spec{"out", "discard", {}, 1}};
  g.edges = {edge_spec{"lines", "c", partitioning::hash},
             edge_spec{"c", "out", partitioning::forward}};
  return g;
}

} // namespace

/// What validate_job_graph says, "" when the graph is valid.
static std::string problem_of(const job_graph& g,
                              const validation_options& opts) {
  auto err = validate_job_graph(g, opts);
  return err ? describe(err) : std::string{};
}

TEST_CASE("one validation: the client names vertices by position, the "
          "Dispatcher by id") {
  auto g = file_count_graph("in.txt");
  g.vertices[0] = vertex_spec{"lines", "sequence", {{"from", "1"}, {"to", "9"}}, 1};
  g.vertices[1].op = "frobnicate";
  CHECK(problem_of(g, client_validation(nullptr))
        == "vertices[1] ('c'): unknown operator 'frobnicate'"
           + std::string{unknown_hint});
  CHECK(problem_of(g, dispatcher_validation())
        == "vertex 'c': unknown operator 'frobnicate'"
           + std::string{unknown_hint});
}

TEST_CASE("one validation: files are checked on the client only") {
  auto g = file_count_graph("/nonexistent/weir/in.txt");
  CHECK(problem_of(g, dispatcher_validation()).empty());
  CHECK(problem_of(g, client_validation(nullptr))
          .find("vertices[0] ('lines'): parameter 'path': ")
        == 0);
}

TEST_CASE("one validation: configuration first, then shape, then operators") {
  auto g = file_count_graph("in.txt");
  g.vertices[1].op = "frobnicate";
  g.edges.push_back(edge_spec{"c", "nowhere", partitioning::hash});
  CHECK(problem_of(g, dispatcher_validation())
        == "edge 'c' -> 'nowhere': no vertex 'nowhere'");
  CHECK(validate_job_graph(g, dispatcher_validation())
        == make_error(errc::invalid_job));
  g.config["taskmanager.numberOfTaskSlots"] = "4";
  CHECK(validate_job_graph(g, dispatcher_validation())
        == make_error(errc::invalid_config));
  CHECK(problem_of(g, dispatcher_validation())
          .find("config: key 'taskmanager.numberOfTaskSlots' cannot be set per "
                "job")
        == 0);
}

TEST_CASE("one validation: a job with user code may use operators the "
          "registry lacks") {
  auto g = file_count_graph("in.txt");
  g.vertices[1].op = "my_count";
  CHECK(!problem_of(g, dispatcher_validation()).empty());
  g.code.libraries.push_back(
    blob_ref{"libmy.so", std::string(32, 'a'), "libmy.so"});
  CHECK(problem_of(g, dispatcher_validation()).empty());
  // A known operator is still checked for its role.
  g.vertices[0].op = "count";
  CHECK(problem_of(g, dispatcher_validation())
        == "vertex 'lines': operator 'count' cannot be a source");
}

TEST_CASE("one validation: library and file names are file names, hashes "
          "content hashes") {
  auto g = file_count_graph("in.txt");
  g.code.files.push_back(blob_ref{"../../x", std::string(32, 'a'), ""});
  CHECK(validate_job_graph(g, dispatcher_validation())
        == make_error(errc::invalid_job));
  CHECK(problem_of(g, dispatcher_validation())
        == "file name '../../x' is not a file name");
  g.code.files[0] = blob_ref{"x", "../../x", ""};
  CHECK(problem_of(g, client_validation(nullptr))
        == "file hash '../../x' is not a content hash (32 lowercase hex "
           "digits)");
}
