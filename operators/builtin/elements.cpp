// `elements`: a bounded source of the values its parameter lists (Flink's
// fromElements), so that a job built in code carries small inputs inside
// its spec and runs wherever the spec goes.

#include <algorithm>

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include "operators/builtin/builtins.hpp"
#include "operators/params.hpp"
#include "operators/builtin/index_runs.hpp"
#include "operators/state_codec.hpp"

namespace weir::ops {

namespace {

/// The values of parameter `values`: one schema for all of them.
struct element_list {
  schema fields;
  std::vector<record> values;
  std::string problem;
};

/// "[1, 2]" → numbers, "[\"a\"]" → lines, "[[\"k\", 1]]" → keyed numbers,
/// "[[\"k\", \"v\"]]" → keyed lines.
element_list parse_elements(const params& p) {
  element_list out;
  auto i = p.find("values");
  if (i == p.end()) {
    out.problem = "parameter 'values': missing (a JSON array of numbers, "
                  "strings or [key, value] pairs)";
    return out;
  }
  auto doc = nlohmann::json::parse(i->second, nullptr, false);
  if (!doc.is_array() || doc.empty()) {
    out.problem = "parameter 'values': not a JSON array with at least one "
                  "element";
    return out;
  }
  auto kind_of = [](const nlohmann::json& v) -> std::string {
    if (v.is_number_integer())
      return "a number";
    if (v.is_string())
      return "a string";
    if (v.is_array() && v.size() == 2 && v[0].is_string()
        && (v[1].is_number_integer() || v[1].is_string()))
      return v[1].is_string() ? "a [key, string] pair" : "a [key, number] pair";
    return {};
  };
  auto first = kind_of(doc[0]);
  for (size_t k = 0; k < doc.size(); ++k) {
    auto& v = doc[k];
    auto kind = kind_of(v);
    if (kind.empty()) {
      out.problem = fmt::format("parameter 'values': element {} is not an "
                                "integer, a string or a [key, value] pair",
                                k);
      return out;
    }
    if (kind != first) {
      out.problem = fmt::format("parameter 'values': element {} is {}, "
                                "element 0 {}",
                                k, kind, first);
      return out;
    }
    if (v.is_array())
      out.values.push_back(v[1].is_string()
                             ? record::string(v[0].get<std::string>(),
                                              v[1].get<std::string>())
                             : record::integer(v[0].get<std::string>(),
                                               v[1].get<int64_t>()));
    else
      out.values.push_back(v.is_string()
                             ? record::string({}, v.get<std::string>())
                             : record::integer({}, v.get<int64_t>()));
  }
  auto& v = out.values.front();
  bool keyed = doc[0].is_array();
  out.fields = keyed ? (v.is_text ? default_schema::keyed_lines()
                                  : default_schema::keyed_numbers())
                     : (v.is_text ? default_schema::lines()
                                  : default_schema::numbers());
  return out;
}

std::string check_elements(const params& p) {
  if (auto problem = check_params("elements", p,
                                  {{"values", param_kind::text, true}});
      !problem.empty())
    return problem;
  return parse_elements(p).problem;
}

/// Subtask i of n emits the elements i, i + n, i + 2n, ...; after a
/// rescale, the runs of such indices that the old subtasks had left
/// (index_runs.hpp).
class elements_source : public source {
public:
  explicit elements_source(element_list list) : list_(std::move(list)) {}

  void open(const operator_context& ctx) override {
    index_ = std::max<int64_t>(ctx.subtask_index, 0);
    step_ = std::max<int64_t>(ctx.parallelism, 1);
    runs_ = {{index_, step_}};
  }

  bool next(row_batch& out, size_t max_rows) override {
    auto size = static_cast<int64_t>(list_.values.size());
    for (size_t n = 0; n < max_rows && !runs_.empty();) {
      auto& r = runs_.front();
      if (r.next >= size) {
        runs_.erase(runs_.begin());
        continue;
      }
      append_record(out, list_.fields,
                    list_.values[static_cast<size_t>(r.next)]);
      r.next += r.stride;
      ++n;
    }
    return std::any_of(runs_.begin(), runs_.end(),
                       [&](const index_run& r) { return r.next < size; });
  }

  std::string snapshot_state() const override {
    if (runs_.empty()) // done: a run past the end
      return write_runs({{static_cast<int64_t>(list_.values.size()), step_}},
                        step_);
    return write_runs(runs_, step_);
  }

  void restore_state(const std::string& bytes) override {
    runs_ = read_runs(bytes, step_, "elements");
  }

  void restore_rescaled(const std::vector<std::string>& old_states) override {
    runs_ = deal_runs(old_states, index_, step_,
                      static_cast<int64_t>(list_.values.size()), "elements");
  }

private:
  element_list list_;
  std::vector<index_run> runs_;
  int64_t index_ = 0;
  int64_t step_ = 1;
};

} // namespace

operator_factory elements_factory() {
  operator_factory f;
  f.name = "elements";
  f.make_source = [](const params& p) -> std::unique_ptr<source> {
    throw_if(check_elements(p));
    return std::make_unique<elements_source>(parse_elements(p));
  };
  f.validate = [](const params& p, role) { return check_elements(p); };
  f.bounded = [](const params&) { return true; };
  f.splits_operator_state = true;
  f.output_schema = [](const params& p, const schema_query&) {
    auto list = parse_elements(p);
    return derived_schema{list.fields, list.problem};
  };
  return f;
}

} // namespace weir::ops
