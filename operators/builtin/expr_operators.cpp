// filter with "where", map with "select" and project with "fields": the
// built-in operators on fields, through the expression engine (expr.hpp).

#include <cctype>

#include <fmt/format.h>

#include "operators/builtin/builtins.hpp"
#include "operators/expr/expr.hpp"
#include "operators/params.hpp"

namespace weir::ops {

namespace {

/// Keeps the rows for which the predicate is true (null counts as false).
class where_transform final : public transform {
public:
  explicit where_transform(std::string text) : text_(std::move(text)) {}

  void open(const operator_context& ctx) override {
    if (ctx.input == nullptr)
      throw operator_error("filter needs an input");
    auto compiled = expr::compile_predicate(text_, *ctx.input);
    throw_if(compiled.problem.empty()
               ? ""
               : fmt::format("parameter 'where': {}", compiled.problem));
    predicate_ = std::move(compiled.expr);
  }

  void process(row_batch& in, row_batch& out, bool) override {
    expr::filter(*predicate_, in, out);
  }

private:
  std::string text_;
  std::shared_ptr<const expr::compiled_expr> predicate_;
};

/// Emits one row of the select list's values per input row.
class select_transform final : public transform {
public:
  select_transform(std::string param, std::string text)
    : param_(std::move(param)), text_(std::move(text)) {}

  void open(const operator_context& ctx) override {
    if (ctx.input == nullptr)
      throw operator_error("map needs an input");
    select_ = expr::compile_select(text_, *ctx.input);
    throw_if(select_.problem.empty()
               ? ""
               : fmt::format("parameter '{}': {}", param_, select_.problem));
  }

  void process(row_batch& in, row_batch& out, bool) override {
    expr::evaluate_select(select_, in, out);
  }

private:
  std::string param_;
  std::string text_;
  expr::select_result select_;
};

/// project's list: field names, each optionally `as` another name.
std::string check_project_list(const std::string& list) {
  size_t start = 0;
  while (start <= list.size()) {
    auto comma = list.find(',', start);
    auto item = list.substr(start, comma == std::string::npos
                                     ? std::string::npos
                                     : comma - start);
    for (char c : item)
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == ' '
            || c == '`' || c == '\t'))
        return fmt::format("parameter 'fields': '{}' is not a field name or "
                           "'name as other' (use map with \"select\" for "
                           "expressions)",
                           item);
    if (comma == std::string::npos)
      break;
    start = comma + 1;
  }
  return {};
}

} // namespace

std::unique_ptr<transform> make_where_transform(const std::string& text) {
  return std::make_unique<where_transform>(text);
}

std::unique_ptr<transform> make_select_transform(const std::string& param,
                                                 const std::string& text) {
  return std::make_unique<select_transform>(param, text);
}

derived_schema where_schema(const std::string& text, const schema_query& q) {
  if (q.input == nullptr)
    return {{}, "filter cannot be a source"};
  auto compiled = expr::compile_predicate(text, *q.input);
  if (!compiled.problem.empty())
    return {{}, fmt::format("parameter 'where': {}", compiled.problem)};
  return {*q.input, {}};
}

derived_schema select_schema(const std::string& param, const std::string& text,
                             const schema_query& q) {
  if (q.input == nullptr)
    return {{}, "map cannot be a source"};
  auto select = expr::compile_select(text, *q.input);
  if (!select.problem.empty())
    return {{}, fmt::format("parameter '{}': {}", param, select.problem)};
  return {select.output, {}};
}

operator_factory project_factory() {
  operator_factory f;
  f.name = "project";
  static const std::vector<param_spec> specs{
    {"fields", param_kind::text, true}};
  auto check = [](const params& p) {
    auto problem = check_params("project", p, specs);
    return problem.empty() ? check_project_list(p.at("fields")) : problem;
  };
  f.make_transform = [check](const params& p) {
    throw_if(check(p));
    return make_select_transform("fields", p.at("fields"));
  };
  f.validate = [check](const params& p, role) { return check(p); };
  f.output_schema = [](const params& p, const schema_query& q) {
    auto i = p.find("fields");
    return select_schema("fields", i == p.end() ? "" : i->second, q);
  };
  return f;
}

} // namespace weir::ops
