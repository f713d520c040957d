#include <algorithm>

#include <fmt/format.h>

#include "operators/builtin/builtins.hpp"
#include "operators/builtin/transforms.hpp"

namespace weir::ops {

namespace {

const named_function* find_function(const std::vector<named_function>& table,
                                    const std::string& name) {
  auto matches = [&](const named_function& f) { return f.name == name; };
  auto i = std::find_if(table.begin(), table.end(), matches);
  return i == table.end() ? nullptr : &*i;
}

/// Checks the `function` parameter, then the parameters of that function.
std::string check_function(const std::string& op,
                           const std::vector<named_function>& table,
                           const params& p) {
  auto i = p.find("function");
  if (i == p.end())
    return "parameter 'function': missing";
  const auto* f = find_function(table, i->second);
  if (f == nullptr) {
    std::vector<std::string> names;
    for (const auto& g : table)
      names.push_back(g.name);
    return fmt::format(
      "parameter 'function': unknown {} function '{}' (known: {}; an "
      "operator of a user library is a step of its own: \"operator\": "
      "\"{}\", in C++ .apply(\"{}\"))",
      op, i->second, join_sorted(std::move(names)), i->second, i->second);
  }
  auto specs = f->extra_params;
  specs.insert(specs.begin(), param_spec{"function", param_kind::text, true});
  return check_params(op, p, specs);
}

/// An operator whose behaviour is one function picked from `table`, or,
/// with `expression_param` ("where" for filter, "select" for map), an
/// expression on fields instead.
operator_factory function_operator(std::string op,
                                   const std::vector<named_function>& table,
                                   std::string expression_param) {
  operator_factory f;
  f.name = op;
  auto uses_expression = [expression_param](const params& p) {
    return !expression_param.empty() && p.count("function") == 0
           && p.count(expression_param) > 0;
  };
  auto check = [op, &table, expression_param,
                uses_expression](const params& p) -> std::string {
    if (uses_expression(p))
      return check_params(op, p, {{expression_param, param_kind::text, true}});
    if (!expression_param.empty() && p.count("function") == 0)
      return fmt::format("parameter 'function' or '{}': missing",
                         expression_param);
    return check_function(op, table, p);
  };
  f.make_transform = [op, &table, check, expression_param,
                      uses_expression](const params& p) {
    throw_if(check(p));
    if (uses_expression(p))
      return expression_param == "where"
               ? make_where_transform(p.at("where"))
               : make_select_transform(expression_param,
                                       p.at(expression_param));
    return find_function(table, p.at("function"))->make(p);
  };
  f.validate = [check](const params& p, role) { return check(p); };
  f.output_schema = [op, &table, expression_param,
                     uses_expression](const params& p, const schema_query& q) {
    if (uses_expression(p))
      return expression_param == "where"
               ? where_schema(p.at("where"), q)
               : select_schema(expression_param, p.at(expression_param), q);
    auto i = p.find("function");
    const auto* fn = i == p.end() ? nullptr : find_function(table, i->second);
    if (q.input == nullptr || fn == nullptr)
      return derived_schema{q.input ? *q.input : schema{}, {}};
    return function_schema(op, *fn, *q.input);
  };
  return f;
}

} // namespace

operator_factory map_factory() {
  return function_operator("map", map_functions(), "select");
}

operator_factory flat_map_factory() {
  return function_operator("flat_map", flat_map_functions(), "");
}

operator_factory filter_factory() {
  return function_operator("filter", filter_functions(), "where");
}

} // namespace weir::ops
