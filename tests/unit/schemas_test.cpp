// The planner's schemas: derive_schemas, the job spec's "key", the schemas
// in `weir info`. A small registry of test operators whose schemas are set
// by their parameters, so that nothing here depends on the built-in ones.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "messages/errors.hpp"
#include "operators/registry.hpp"
#include "plan/chaining.hpp"
#include "plan/job_spec.hpp"
#include "plan/schemas.hpp"

using namespace weir;

namespace {

schema parsed(const std::string& text) {
  auto s = parse_schema(text);
  REQUIRE_MESSAGE(s.problem.empty(), s.problem);
  return s.value;
}

/// An operator `name` for role `r` whose schema is `derive` (unset: the
/// registry's default).
ops::operator_factory
factory(const std::string& name, ops::role r,
        std::function<ops::derived_schema(const ops::params&,
                                          const ops::schema_query&)>
          derive = nullptr) {
  ops::operator_factory f;
  f.name = name;
  if (r == ops::role::source)
    f.make_source = [](const ops::params&) { return nullptr; };
  else if (r == ops::role::transform)
    f.make_transform = [](const ops::params&) { return nullptr; };
  else
    f.make_sink = [](const ops::params&) { return nullptr; };
  f.output_schema = std::move(derive);
  return f;
}

/// A keyed sum of the field named by parameter `field`: the key fields,
/// then `total: int64`.
ops::derived_schema total_of(const ops::params& p,
                             const ops::schema_query& q) {
  ops::derived_schema out;
  auto& name = p.at("field");
  auto i = q.input->find(name);
  if (!i) {
    out.problem = "no field '" + name + "'";
    return out;
  }
  auto& f = q.input->fields[*i];
  if (f.type != field_type::int64 && f.type != field_type::float64) {
    out.problem = "field '" + name + "' is " + std::string{to_string(f.type)}
                  + ", total needs int64 or double";
    return out;
  }
  for (auto& k : q.key)
    out.value.fields.push_back(q.input->fields[*q.input->find(k)]);
  out.value.fields.push_back(field{"total", field_type::int64, false});
  return out;
}

/// src: a source emitting its parameter `schema`; pass: a transform without
/// output_schema (passes its input through); total: total_of; none: a
/// transform that emits no fields; out: a sink; strict_out: a sink that
/// needs a field `value`.
const ops::registry& test_registry() {
  static const ops::registry instance = [] {
    using ops::role;
    ops::registry r;
    r.add(factory("src", role::source,
                  [](const ops::params& p, const ops::schema_query&) {
                    auto s = parse_schema(p.at("schema"));
                    return ops::derived_schema{s.value, s.problem};
                  }));
    r.add(factory("pass", role::transform));
    r.add(factory("total", role::transform, total_of));
    r.add(factory("none", role::transform,
                  [](const ops::params&, const ops::schema_query&) {
                    return ops::derived_schema{};
                  }));
    r.add(factory("out", role::sink));
    r.add(factory("strict_out", role::sink,
                  [](const ops::params&, const ops::schema_query& q) {
                    ops::derived_schema result;
                    if (!q.input->find("value"))
                      result.problem = "needs a field 'value', got "
                                       + to_string(*q.input);
                    return result;
                  }));
    return r;
  }();
  return instance;
}

vertex_spec source(const std::string& id, const std::string& schema_text) {
  return vertex_spec{id, "src", {{"schema", schema_text}}, 1, {}};
}

vertex_spec vertex(const std::string& id, const std::string& op,
                   std::map<std::string, std::string> params = {}) {
  return vertex_spec{id, op, std::move(params), 1, {}};
}

edge_spec edge(const std::string& from, const std::string& to,
               partitioning part = partitioning::forward,
               std::vector<std::string> key = {}) {
  return edge_spec{from, to, part, std::move(key)};
}

job_graph graph(std::vector<vertex_spec> vertices,
                std::vector<edge_spec> edges) {
  job_graph g;
  g.name = "g";
  g.vertices = std::move(vertices);
  g.edges = std::move(edges);
  REQUIRE_FALSE(check_job_graph_shape(g));
  return g;
}

/// The problem's line ("": none).
std::string derive(job_graph& g,
                   schema_source from = schema_source::registry) {
  auto err = derive_schemas(g, test_registry(), from);
  if (err)
    CHECK(err.code() == static_cast<uint8_t>(errc::invalid_job));
  return err ? describe(err) : "";
}

/// logs (user: string, bytes: int64) -hash by `key`-> t: total of bytes
/// -forward-> sink.
job_graph user_bytes(std::vector<std::string> key) {
  return graph({source("logs", "user: string, bytes: int64"),
                vertex("t", "total", {{"field", "bytes"}}), vertex("o", "out")},
               {edge("logs", "t", partitioning::hash, std::move(key)),
                edge("t", "o")});
}

/// The problem of parsing and resolving `text` with the test registry
/// ("" when it resolves); `g` receives the graph.
std::string resolve(const std::string& text, job_graph* g = nullptr) {
  auto spec = parse_job_spec_text(text, "x.json");
  if (!spec)
    return describe(spec.error());
  auto result = resolve_job_graph(*spec, {}, std::nullopt, &test_registry());
  if (!result)
    return describe(result.error());
  if (g != nullptr)
    *g = std::move(*result);
  return {};
}

/// A spec of a source `a` with schema `schema_text`, a sink `b`, and one
/// edge a -> b with the given JSON members.
std::string one_edge(const std::string& members,
                     const std::string& schema_text = "key: string, n: int64") {
  return R"({"name": "t", "vertices": [
    {"id": "a", "operator": "src", "params": {"schema": ")"
         + schema_text + R"("}},
    {"id": "b", "operator": "out"}],
    "edges": [{"from": "a", "to": "b")"
         + (members.empty() ? "" : ", " + members) + "}]}";
}

} // namespace

TEST_SUITE("schemas") {

TEST_CASE("outputs follow the operators; sinks have none") {
  auto g = user_bytes({"user"});
  CHECK(derive(g) == "");
  CHECK(g.vertices[0].output == parsed("user: string, bytes: int64"));
  CHECK(g.vertices[1].output == parsed("user: string, total: int64"));
  CHECK(g.vertices[2].output.empty());
  CHECK(has_schemas(g));
  // A transform without output_schema passes its input through.
  auto p = graph({source("a", "x: int64, y: string"), vertex("p", "pass"),
                  vertex("o", "out")},
                 {edge("a", "p"), edge("p", "o")});
  CHECK(!has_schemas(p));
  CHECK(derive(p) == "");
  CHECK(p.vertices[1].output == parsed("x: int64, y: string"));
  CHECK(p.edges[0].key.empty()); // forward: no key
}

TEST_CASE("a hash edge without key is keyed by 'key' when there is one") {
  auto g = graph({source("a", "key: string, value: int64"),
                  vertex("t", "total", {{"field", "value"}}),
                  vertex("o", "out")},
                 {edge("a", "t", partitioning::hash), edge("t", "o")});
  CHECK(derive(g) == "");
  CHECK(g.edges[0].key == std::vector<std::string>{"key"});
  CHECK(g.edges[1].key.empty());
  // The operator saw the key.
  CHECK(g.vertices[1].output == parsed("key: string, total: int64"));
}

TEST_CASE("a hash edge without key and without a field 'key' is refused") {
  auto g = user_bytes({});
  CHECK(derive(g)
        == "edge 'logs' -> 't': hash partitioning needs key fields: give "
           "\"key\": [...] (fields: user, bytes)");
}

TEST_CASE("key fields must be in the producer's schema") {
  auto g = user_bytes({"usr"});
  CHECK(derive(g)
        == "edge 'logs' -> 't': key field 'usr' is not in (user: string, "
           "bytes: int64)");
  auto twice = user_bytes({"user", "user"});
  CHECK(derive(twice) == "edge 'logs' -> 't': key field 'user' appears twice");
}

TEST_CASE("double key fields are refused; the other types are keys") {
  auto g = graph({source("a", "x: double, n: int64"),
                  vertex("t", "total", {{"field", "n"}}), vertex("o", "out")},
                 {edge("a", "t", partitioning::hash, {"x"}), edge("t", "o")});
  CHECK(derive(g)
        == "edge 'a' -> 't': key field 'x' is double: keys must be int64, "
           "string, bytes, bool or timestamp");
  auto ok = graph({source("a", "i: int64, s: string, b: bytes, f: bool, "
                               "t: timestamp, n: int64?"),
                   vertex("t", "total", {{"field", "n"}}), vertex("o", "out")},
                  {edge("a", "t", partitioning::hash, {"i", "s", "b", "f", "t"}),
                   edge("t", "o")});
  CHECK(derive(ok) == "");
  CHECK(to_string(ok.vertices[1].output)
        == "(i: int64, s: string, b: bytes, f: bool, t: timestamp, total: "
           "int64)");
}

TEST_CASE("a key on an edge that is not hash is refused") {
  auto g = user_bytes({"user"});
  g.edges[0].part = partitioning::rebalance;
  CHECK(derive(g)
        == "edge 'logs' -> 't': \"key\" needs \"partitioning\": \"hash\"");
}

TEST_CASE("all inputs of a vertex carry one schema") {
  auto g = graph({source("a", "x: int64"), source("b", "x: string"),
                  vertex("j", "pass"), vertex("o", "out")},
                 {edge("a", "j", partitioning::rebalance),
                  edge("b", "j", partitioning::rebalance), edge("j", "o")});
  CHECK(derive(g)
        == "vertex 'j': its inputs differ: 'a' sends (x: int64), 'b' sends "
           "(x: string)");
  // Names and nullability count, not only types.
  g.vertices[1].params["schema"] = "y: int64";
  CHECK(derive(g)
        == "vertex 'j': its inputs differ: 'a' sends (x: int64), 'b' sends "
           "(y: int64)");
  g.vertices[1].params["schema"] = "x: int64?";
  CHECK(derive(g)
        == "vertex 'j': its inputs differ: 'a' sends (x: int64), 'b' sends "
           "(x: int64?)");
  g.vertices[1].params["schema"] = "x: int64";
  CHECK(derive(g) == "");
  CHECK(g.vertices[2].output == parsed("x: int64"));
}

TEST_CASE("all hash inputs of a vertex use one key") {
  auto g = graph({source("a", "u: string, v: string, n: int64"),
                  source("b", "u: string, v: string, n: int64"),
                  vertex("t", "total", {{"field", "n"}}), vertex("o", "out")},
                 {edge("a", "t", partitioning::hash, {"u"}),
                  edge("b", "t", partitioning::hash, {"v"}), edge("t", "o")});
  CHECK(derive(g)
        == "vertex 't': its hash inputs differ in key: 'a' by (u), 'b' by "
           "(v)");
  g.edges[1].key = {"u"};
  CHECK(derive(g) == "");
  CHECK(g.vertices[2].output == parsed("u: string, total: int64"));
}

TEST_CASE("an operator's problem names its vertex") {
  auto g = graph({source("logs", "user: string, bytes: string"),
                  vertex("t", "total", {{"field", "bytes"}}),
                  vertex("o", "out")},
                 {edge("logs", "t", partitioning::hash, {"user"}),
                  edge("t", "o")});
  CHECK(derive(g)
        == "vertex 't': field 'bytes' is string, total needs int64 or double");
  // A source's, and a sink's problem with its input.
  auto bad = graph({source("s", "x: float"), vertex("o", "out")},
                   {edge("s", "o")});
  CHECK(derive(bad)
        == "vertex 's': field 'x': unknown type 'float' (int64, double, bool, "
           "string, bytes, timestamp)");
  auto sink = graph({source("s", "x: int64"), vertex("o", "strict_out")},
                    {edge("s", "o")});
  CHECK(derive(sink) == "vertex 'o': needs a field 'value', got (x: int64)");
}

TEST_CASE("a source or transform must emit some field") {
  auto g = graph({source("s", "x: int64"), vertex("n", "none"),
                  vertex("o", "out")},
                 {edge("s", "n"), edge("n", "o")});
  CHECK(derive(g) == "vertex 'n': operator 'none' emits no fields");
  // A lone vertex (a driver's job) feeds nobody: it may emit nothing.
  auto lone = graph({vertex("n", "none")}, {});
  CHECK(derive(lone) == "");
  CHECK(has_schemas(lone));
}

TEST_CASE("operators the registry lacks: refused, or its defaults") {
  auto g = graph({source("s", "key: string, n: int64"),
                  vertex("m", "my_map"), vertex("o", "my_sink")},
                 {edge("s", "m", partitioning::hash), edge("m", "o")});
  CHECK(derive(g).rfind("vertex 'm': unknown operator 'my_map' (not built "
                        "in: ", 0) == 0);
  CHECK(derive(g, schema_source::registry_or_defaults) == "");
  CHECK(g.vertices[1].output == parsed("key: string, n: int64"));
  CHECK(g.vertices[2].output.empty());
  CHECK(g.edges[0].key == std::vector<std::string>{"key"});
  // An unknown source emits keyed lines.
  auto u = graph({vertex("s", "my_source"), vertex("o", "out")},
                 {edge("s", "o")});
  CHECK(derive(u, schema_source::registry_or_defaults) == "");
  CHECK(u.vertices[0].output == default_schema::keyed_lines());
}

TEST_CASE("schemas already in the graph are kept and checked") {
  auto g = user_bytes({});
  g.vertices[0].output = parsed("key: string, bytes: int64");
  g.vertices[1].output = parsed("key: string, total: int64");
  g.vertices[1].op = "not_known_here";
  REQUIRE(has_schemas(g));
  CHECK(derive(g, schema_source::graph) == "");
  CHECK(g.vertices[1].output == parsed("key: string, total: int64"));
  CHECK(g.edges[0].key == std::vector<std::string>{"key"});
  g.edges[0].key = {"user"};
  CHECK(derive(g, schema_source::graph)
        == "edge 'logs' -> 't': key field 'user' is not in (key: string, "
           "bytes: int64)");
}

TEST_CASE("the cluster derives what a graph from before rows lacks") {
  // User operators (unknown to the built-in registry) get its defaults.
  auto g = graph({vertex("s", "my_source"), vertex("m", "my_map"),
                  vertex("o", "my_sink")},
                 {edge("s", "m", partitioning::hash), edge("m", "o")});
  CHECK(!derive_missing_schemas(g));
  CHECK(g.vertices[0].output == default_schema::keyed_lines());
  CHECK(g.vertices[1].output == default_schema::keyed_lines());
  CHECK(g.edges[0].key == std::vector<std::string>{"key"});
  // A graph with schemas keeps them (its client derived them with the
  // job's libraries).
  g.vertices[1].output = parsed("key: string, n: int64");
  CHECK(!derive_missing_schemas(g));
  CHECK(g.vertices[1].output == parsed("key: string, n: int64"));
  g.vertices[1].output = {};
  g.vertices[0].output = parsed("n: int64");
  CHECK(!derive_missing_schemas(g));
  CHECK(g.vertices[0].output == default_schema::keyed_lines());
}

TEST_CASE("spec: \"key\" is a field name or an array of them") {
  job_graph g;
  CHECK(resolve(one_edge(R"("partitioning": "hash", "key": "key")"), &g)
        == "");
  CHECK(g.edges[0].key == std::vector<std::string>{"key"});
  CHECK(resolve(one_edge(R"("partitioning": "hash", "key": ["n", "key"])"),
                &g)
        == "");
  CHECK(g.edges[0].key == std::vector<std::string>{"n", "key"});
  // Without "key": the default, filled in for the runtime.
  CHECK(resolve(one_edge(R"("partitioning": "hash")"), &g) == "");
  CHECK(g.edges[0].key == std::vector<std::string>{"key"});
  CHECK(g.vertices[0].output == parsed("key: string, n: int64"));
}

TEST_CASE("spec: \"key\" errors") {
  CHECK(resolve(one_edge(R"("key": ["key"])"))
        == "x.json: edge 'a' -> 'b': \"key\" needs \"partitioning\": "
           "\"hash\"");
  CHECK(resolve(one_edge(R"("partitioning": "forward", "key": "key")"))
        == "x.json: edge 'a' -> 'b': \"key\" needs \"partitioning\": "
           "\"hash\"");
  CHECK(resolve(one_edge(R"("partitioning": "hash", "key": 3)"))
        == "x.json: edges[0].key: expected a field name or an array of field "
           "names, got a number (3)");
  CHECK(resolve(one_edge(R"("partitioning": "hash", "key": [])"))
        == "x.json: edges[0].key: must name at least one field");
  CHECK(resolve(one_edge(R"("partitioning": "hash", "key": ["key", 1])"))
        == "x.json: edges[0].key[1]: expected a string, got a number (1)");
  CHECK(resolve(one_edge(R"("partitioning": "hash", "key": "")"))
        == "x.json: edges[0].key: must not be empty");
  CHECK(resolve(one_edge(R"("partitioning": "hash", "key": [""])"))
        == "x.json: edges[0].key[0]: must not be empty");
  // Unknown members are still refused.
  CHECK(resolve(one_edge(R"("partitioning": "hash", "keys": ["key"])"))
        == "x.json: edges[0].keys: unknown field (known: from, to, "
           "partitioning, key, output)");
}

TEST_CASE("spec: schema problems are one line after the spec's name") {
  CHECK(resolve(one_edge(R"("partitioning": "hash", "key": ["usr"])"))
        == "x.json: edge 'a' -> 'b': key field 'usr' is not in (key: string, "
           "n: int64)");
  CHECK(resolve(one_edge(R"("partitioning": "hash")", "user: string"))
        == "x.json: edge 'a' -> 'b': hash partitioning needs key fields: give "
           "\"key\": [...] (fields: user)");
  auto two = R"({"name": "t", "vertices": [
    {"id": "a", "operator": "src", "params": {"schema": "x: int64"}},
    {"id": "b", "operator": "src", "params": {"schema": "x: string"}},
    {"id": "j", "operator": "pass"},
    {"id": "o", "operator": "out"}],
    "edges": [{"from": "a", "to": "j"}, {"from": "b", "to": "j"},
              {"from": "j", "to": "o"}]})";
  CHECK(resolve(two)
        == "x.json: vertex 'j': its inputs differ: 'a' sends (x: int64), 'b' "
           "sends (x: string)");
}

TEST_CASE("describe_plan shows each edge's key and schema") {
  auto g = graph({source("logs", "user: string, bytes: int64"),
                  vertex("p", "pass"),
                  vertex("t", "total", {{"field", "bytes"}}),
                  vertex("o", "out")},
                 {edge("logs", "p"), edge("p", "t", partitioning::hash, {"user"}),
                  edge("t", "o", partitioning::rebalance)});
  REQUIRE(derive(g) == "");
  auto plan = describe_plan(g);
  auto edges = plan.substr(plan.find("Edges:\n"));
  CHECK(edges
        == "Edges:\n"
           "  logs -> p  forward         (user: string, bytes: int64)  "
           "chained\n"
           "  p -> t     hash by (user)  (user: string, bytes: int64)\n"
           "  t -> o     rebalance       (user: string, total: int64)\n");
}

} // TEST_SUITE
