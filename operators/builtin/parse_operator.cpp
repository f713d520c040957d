#include "operators/builtin/parse_operator.hpp"

#include <fmt/format.h>

#include "operators/builtin/builtins.hpp"
#include "operators/params.hpp"
#include "operators/state_codec.hpp"

namespace weir::ops {

namespace {

const std::vector<param_spec>& parse_params() {
  static const std::vector<param_spec> specs{
    {"format", param_kind::text, false},
    {"schema", param_kind::text, true},
    {"field", param_kind::text, false},
    {"on_error", param_kind::text, false},
  };
  return specs;
}

std::string check_parse(const params& p) {
  auto problem = check_params("parse", p, parse_params());
  if (!problem.empty())
    return problem;
  auto format = text_param(p, "format", "csv");
  if (format != "json" && !parse_format_name(format))
    return fmt::format("parameter 'format': expected csv, tsv, whitespace or "
                       "json, got '{}'",
                       format);
  if (auto s = parse_schema(p.at("schema")); !s.problem.empty())
    return fmt::format("parameter 'schema': {}", s.problem);
  auto on_error = text_param(p, "on_error", "fail");
  if (on_error != "fail" && on_error != "skip")
    return fmt::format("parameter 'on_error': expected fail or skip, got '{}'",
                       on_error);
  return {};
}

/// The problem when `input` has no string field `field`.
std::string check_input(const std::string& field, const schema* input) {
  if (input != nullptr)
    if (auto i = input->find(field);
        i && input->fields[*i].type == field_type::string)
      return {};
  if (input == nullptr)
    return fmt::format("parse needs a string field '{}' in its input, and "
                       "has no input",
                       field);
  return fmt::format("parse needs a string field '{}' in its input, which is "
                     "{}",
                     field, to_string(*input));
}

} // namespace

parse_transform::parse_transform(std::optional<delimited_format> f, schema s,
                                 std::string field, on_error e)
  : format_(f), schema_(std::move(s)), field_(std::move(field)),
    on_error_(e) {
}

void parse_transform::open(const operator_context& ctx) {
  throw_if(check_input(field_, ctx.input));
  field_index_ = *ctx.input->find(field_);
  index_ = std::max<int32_t>(ctx.subtask_index, 0);
  parallelism_ = std::max<int32_t>(ctx.parallelism, 1);
  if (ctx.output != nullptr && *ctx.output != schema_)
    throw operator_error(fmt::format(
      "parse: the plan's output schema {} is not parameter 'schema' {}",
      to_string(*ctx.output), to_string(schema_)));
}

void parse_transform::process(row_batch& in, row_batch& out, bool) {
  const auto& text = in.columns[field_index_];
  for (size_t i = 0; i < in.rows; ++i) {
    ++lines_;
    std::string problem;
    if (text.is_null(i))
      problem = fmt::format("field '{}' is null", field_);
    else if (format_)
      problem = parse_delimited(text.str(i), *format_, schema_, out);
    else
      problem = parse_json_line(text.str(i), schema_, out);
    if (problem.empty()) {
      out.push_time(in.time(i));
      continue;
    }
    auto where = fmt::format("line {}: {}", lines_, problem);
    if (on_error_ == on_error::fail)
      throw operator_error(where);
    if (skipped_++ == 0)
      first_problem_ = std::move(where);
  }
}

std::string parse_transform::snapshot_state() const {
  state_writer w;
  w.int64(lines_);
  w.int64(skipped_);
  w.text(first_problem_);
  return w.take();
}

void parse_transform::restore_state(const std::string& bytes) {
  state_reader r{bytes, "parse"};
  lines_ = r.int64();
  skipped_ = r.int64();
  first_problem_ = r.text();
}

void parse_transform::restore_rescaled(
  const std::vector<std::string>& old_states) {
  lines_ = 0;
  skipped_ = 0;
  first_problem_.clear();
  for (size_t j = static_cast<size_t>(index_); j < old_states.size();
       j += static_cast<size_t>(parallelism_)) {
    if (old_states[j].empty())
      continue;
    state_reader r{old_states[j], "parse"};
    lines_ += r.int64();
    skipped_ += r.int64();
    auto problem = r.text();
    if (first_problem_.empty())
      first_problem_ = std::move(problem);
  }
}

operator_factory parse_factory() {
  operator_factory f;
  f.name = "parse";
  f.splits_operator_state = true;
  f.make_transform = [](const params& p) -> std::unique_ptr<transform> {
    throw_if(check_parse(p));
    auto format = text_param(p, "format", "csv");
    return std::make_unique<parse_transform>(
      format == "json" ? std::nullopt : parse_format_name(format),
      parse_schema(p.at("schema")).value, text_param(p, "field", "value"),
      text_param(p, "on_error", "fail") == "skip"
        ? parse_transform::on_error::skip
        : parse_transform::on_error::fail);
  };
  f.validate = [](const params& p, role) { return check_parse(p); };
  f.output_schema = [](const params& p,
                       const schema_query& q) -> derived_schema {
    if (auto problem = check_parse(p); !problem.empty())
      return {{}, problem};
    if (auto problem = check_input(text_param(p, "field", "value"), q.input);
        !problem.empty())
      return {{}, problem};
    return {parse_schema(p.at("schema")).value, {}};
  };
  return f;
}

} // namespace weir::ops
