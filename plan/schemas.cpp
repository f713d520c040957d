#include "plan/schemas.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "operators/registry.hpp"
#include "plan/chaining.hpp"

namespace weir {

namespace {

std::string edge_name(const edge_spec& e) {
  return fmt::format("edge '{}' -> '{}'", e.from, e.to);
}

/// Whether some edge leaves vertex `id` (its output schema is used).
bool feeds_others(const job_graph& g, const std::string& id) {
  for (auto& e : g.edges)
    if (e.from == id)
      return true;
  return false;
}

std::string field_names(const schema& s) {
  std::vector<std::string> names;
  for (auto& f : s.fields)
    names.push_back(f.name);
  return fmt::format("{}", fmt::join(names, ", "));
}

/// Checks the key of edge `e` against `sent`, the schema its producer
/// emits; a hash edge without one gets ["key"] when `sent` has that field.
std::string check_key(edge_spec& e, const schema& sent) {
  if (e.part != partitioning::hash) {
    if (!e.key.empty())
      return fmt::format("{}: \"key\" needs \"partitioning\": \"hash\"",
                         edge_name(e));
    return {};
  }
  if (e.key.empty()) {
    if (!sent.find("key"))
      return fmt::format("{}: hash partitioning needs key fields: give "
                         "\"key\": [...] (fields: {})",
                         edge_name(e), field_names(sent));
    e.key = {"key"};
  }
  for (size_t i = 0; i < e.key.size(); ++i) {
    auto& name = e.key[i];
    for (size_t j = 0; j < i; ++j)
      if (e.key[j] == name)
        return fmt::format("{}: key field '{}' appears twice", edge_name(e),
                           name);
    auto index = sent.find(name);
    if (!index)
      return fmt::format("{}: key field '{}' is not in {}", edge_name(e),
                         name, to_string(sent));
    if (sent.fields[*index].type == field_type::float64)
      return fmt::format("{}: key field '{}' is double: keys must be int64, "
                         "string, bytes, bool or timestamp",
                         edge_name(e), name);
  }
  return {};
}

/// The inputs of a two-input vertex `v`, each with its own schema and key
/// (the operator checks how they fit together).
ops::schema_query sides_of(job_graph& g, const vertex_spec& v,
                           std::string& problem) {
  ops::schema_query q;
  for (auto& e : g.edges) {
    if (e.to != v.id)
      continue;
    auto& sent = rows_of(g, e);
    problem = check_key(e, sent);
    if (!problem.empty())
      return q;
    if (q.inputs.empty()) {
      q.input = &sent;
      q.key = e.key;
    }
    q.inputs.push_back({e.from, &sent, e.key});
  }
  return q;
}

/// The input of vertex `v` (nullptr for a source) and its key, after
/// checking the vertex's input edges; `problem` says what does not fit.
ops::schema_query input_of(job_graph& g, const vertex_spec& v,
                           std::string& problem) {
  ops::schema_query q;
  const edge_spec* first = nullptr; // the first input edge
  const edge_spec* keyed = nullptr; // the first hash input edge
  for (auto& e : g.edges) {
    if (e.to != v.id)
      continue;
    auto& sent = rows_of(g, e);
    if (first == nullptr) {
      first = &e;
      q.input = &sent;
    } else if (sent != *q.input) {
      problem = fmt::format("vertex '{}': its inputs differ: '{}' sends {}, "
                            "'{}' sends {}",
                            v.id, first->from, to_string(*q.input), e.from,
                            to_string(sent));
      return q;
    }
  }
  for (auto& e : g.edges) {
    if (e.to != v.id)
      continue;
    problem = check_key(e, rows_of(g, e));
    if (!problem.empty())
      return q;
    if (e.part != partitioning::hash)
      continue;
    if (keyed == nullptr) {
      keyed = &e;
      q.key = e.key;
    } else if (e.key != q.key) {
      problem = fmt::format("vertex '{}': its hash inputs differ in key: "
                            "'{}' by ({}), '{}' by ({})",
                            v.id, keyed->from, fmt::join(q.key, ", "), e.from,
                            fmt::join(e.key, ", "));
      return q;
    }
  }
  return q;
}

/// What vertex `v` in role `r` emits for `q`, from `from`.
ops::derived_schema output_of(const vertex_spec& v, ops::role r,
                              const ops::schema_query& q,
                              const ops::registry& reg, schema_source from) {
  if (from == schema_source::graph)
    return {v.output, {}};
  if (from == schema_source::registry_or_defaults && reg.find(v.op) == nullptr)
    return ops::default_output_schema(r, q);
  return reg.output_schema(v.op, r, v.params, q);
}

/// Why `v`'s "watermarks" cannot apply to what it emits ("" when they can,
/// or when it has none): the event time is an int64 or timestamp field of
/// its rows, so a sink has none.
std::string watermark_problem(const vertex_spec& v, ops::role r,
                              const schema& out) {
  if (!v.watermarks.enabled())
    return {};
  if (r == ops::role::sink)
    return fmt::format("vertex '{}': watermarks: a sink emits no rows to "
                       "take event times from (name them on the vertex "
                       "that feeds it)",
                       v.id);
  auto i = out.find(v.watermarks.field);
  if (!i)
    return fmt::format("vertex '{}': watermarks.field: '{}' is not in {}",
                       v.id, v.watermarks.field, to_string(out));
  auto type = out.fields[*i].type;
  if (type != field_type::int64 && type != field_type::timestamp)
    return fmt::format("vertex '{}': watermarks.field: '{}' is {}; an event "
                       "time is int64 milliseconds or a timestamp",
                       v.id, v.watermarks.field, to_string(type));
  return {};
}

/// The side outputs of `v` that edges take, from its operator `f` (nullptr:
/// unknown here); "" or the problem, naming the edge.
std::string derive_side_outputs(job_graph& g, vertex_spec& v,
                                const ops::operator_factory* f,
                                const ops::schema_query& q,
                                schema_source from) {
  std::map<std::string, schema> offered;
  bool known = from != schema_source::graph && f != nullptr;
  if (known && f->side_outputs)
    offered = f->side_outputs(v.params, q);
  std::map<std::string, schema> taken;
  for (auto& e : g.edges) {
    if (e.from != v.id || e.output.empty())
      continue;
    if (!known) { // the graph's own schemas, or an operator unknown here
      auto i = v.side_outputs.find(e.output);
      if (i == v.side_outputs.end())
        return fmt::format("{}: vertex '{}' has no side output '{}'",
                           edge_name(e), v.id, e.output);
      taken.insert(*i);
      continue;
    }
    auto i = offered.find(e.output);
    if (i == offered.end()) {
      std::vector<std::string> names;
      for (auto& [name, rows] : offered)
        names.push_back(name);
      return fmt::format("{}: operator '{}' of '{}' has no side output '{}' "
                         "({})",
                         edge_name(e), v.op, v.id, e.output,
                         names.empty() ? std::string{"it has none"}
                                       : fmt::format("its side outputs: {}",
                                                     fmt::join(names, ", ")));
    }
    taken.insert(*i);
  }
  v.side_outputs = std::move(taken);
  return {};
}

} // namespace

caf::error derive_schemas(job_graph& g, const ops::registry& reg,
                          schema_source from) {
  auto invalid = [](std::string what) {
    return make_error(errc::invalid_job, std::move(what));
  };
  for (auto index : topological_order(g)) {
    auto& v = g.vertices[static_cast<size_t>(index)];
    std::string problem;
    auto* f = reg.find(v.op);
    auto q = f != nullptr && f->two_inputs ? sides_of(g, v, problem)
                                           : input_of(g, v, problem);
    if (!problem.empty())
      return invalid(std::move(problem));
    auto r = vertex_role(g, index);
    auto out = output_of(v, r, q, reg, from);
    if (!out.problem.empty())
      return invalid(fmt::format("vertex '{}': {}", v.id, out.problem));
    if (r == ops::role::sink)
      out.value = schema{};
    else if (out.value.empty() && feeds_others(g, v.id))
      return invalid(fmt::format("vertex '{}': operator '{}' emits no fields",
                                 v.id, v.op));
    if (auto p = watermark_problem(v, r, out.value); !p.empty())
      return invalid(std::move(p));
    v.output = std::move(out.value);
    if (auto p = derive_side_outputs(g, v, f, q, from); !p.empty())
      return invalid(std::move(p));
  }
  return {};
}

bool has_schemas(const job_graph& g) {
  for (auto& v : g.vertices)
    if (v.output.empty() && feeds_others(g, v.id))
      return false;
  return true;
}

caf::error derive_missing_schemas(job_graph& g) {
  return derive_schemas(g, ops::registry::builtin(),
                        has_schemas(g) ? schema_source::graph
                                       : schema_source::registry_or_defaults);
}

} // namespace weir
