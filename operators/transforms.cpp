#include <algorithm>

#include <fmt/format.h>

#include "operators/builtins.hpp"
#include "operators/transforms.hpp"

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
      "parameter 'function': unknown {} function '{}' (known: {})", op,
      i->second, join_sorted(std::move(names)));
  }
  auto specs = f->extra_params;
  specs.insert(specs.begin(), param_spec{"function", param_kind::text, true});
  return check_params(op, p, specs);
}

/// An operator whose behaviour is one function picked from `table`.
operator_factory function_operator(std::string op,
                                   const std::vector<named_function>& table) {
  operator_factory f;
  f.name = op;
  f.make_transform = [op, &table](const params& p) {
    throw_if(check_function(op, table, p));
    return find_function(table, p.at("function"))->make(p);
  };
  f.validate = [op, &table](const params& p, role) {
    return check_function(op, table, p);
  };
  f.output_schema = [op, &table](const params& p, const schema_query& q) {
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
  return function_operator("map", map_functions());
}

operator_factory flat_map_factory() {
  return function_operator("flat_map", flat_map_functions());
}

operator_factory filter_factory() {
  return function_operator("filter", filter_functions());
}

} // namespace weir::ops
