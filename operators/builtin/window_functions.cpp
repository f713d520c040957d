// Windows that aggregate with a user's function (operators/window_function.hpp).
#include "operators/window_function.hpp"

#include <cstring>
#include <memory>
#include <utility>

#include <fmt/format.h>

#include "operators/builtin/aggregation.hpp"
#include "operators/builtin/window_operator.hpp"
#include "operators/builtin/windows.hpp"
#include "operators/params.hpp"
#include "operators/state_codec.hpp"

namespace weir::ops {

namespace {

/// The output of a function window: the key fields, window_start,
/// window_end, then `value`.
schema function_window_output(const schema& input,
                              const std::vector<size_t>& key,
                              const std::optional<field_type>& declared) {
  schema out;
  for (auto k : key)
    out.fields.push_back(input.fields[k]);
  out.fields.push_back({"window_start", field_type::timestamp, false});
  out.fields.push_back({"window_end", field_type::timestamp, false});
  auto type = field_type::string;
  if (declared)
    type = *declared;
  else if (auto v = input.find("value"))
    type = input.fields[*v].type == field_type::int64 ? field_type::int64
                                                      : field_type::string;
  out.fields.push_back({"value", type, false});
  return out;
}

/// A user's function as what a window accumulates: bytes per key and window.
class function_accumulation {
public:
  using value = std::string;

  explicit function_accumulation(std::shared_ptr<const window_aggregate_function> f)
    : f_(std::move(f)) {}

  void plan(const schema& input, const std::vector<size_t>& key) {
    input_ = input;
    output_ = function_window_output(input, key, f_->value_type);
  }
  const schema& output() const { return output_; }
  const std::string& state_name() const {
    static const std::string name = "window-function";
    return name;
  }
  std::string initial() const { return f_->create ? f_->create() : std::string{}; }
  void fold(std::string& acc, const row_batch& in, size_t r, bool,
            const key_codec&) const {
    f_->add(acc, to_record(in, input_, r));
  }
  void merge(std::string& acc, const std::string& other,
             std::string_view) const {
    f_->merge(acc, other);
  }
  void emit(const std::string& acc, row_batch& out, size_t column) const {
    auto r = f_->result(acc);
    auto& c = out.columns[column];
    if (c.type != field_type::int64) {
      c.push_str(r.is_text ? r.text : std::to_string(r.num));
      return;
    }
    if (r.is_text)
      throw operator_error(fmt::format(
        "the window function's result '{}' is text; its value is int64",
        r.text));
    c.push_int(r.num);
  }

private:
  std::shared_ptr<const window_aggregate_function> f_;
  schema input_;
  schema output_;
};

std::string check_function_window(const std::string& op, const params& p,
                                  const window_aggregate_function& f) {
  if (auto problem = check_window_params(op, p, false); !problem.empty())
    return problem;
  if (!f.add || !f.result)
    return fmt::format("operator '{}': its window function has no add or "
                       "no result",
                       op);
  if (parse_window_spec(p).spec.type == window_spec::kind::session && !f.merge)
    return "parameter 'type': session windows merge, and this window "
           "function has no merge";
  if (f.value_type && *f.value_type != field_type::int64
      && *f.value_type != field_type::string)
    return fmt::format("operator '{}': a window function's value is int64 "
                       "or string, not {}",
                       op, to_string(*f.value_type));
  return {};
}

} // namespace

std::string encode_record_value(const record& r) {
  if (r.is_text)
    return "t" + r.text;
  std::string out = "i";
  out.append(reinterpret_cast<const char*>(&r.num), 8);
  return out;
}

record decode_record_value(const std::string& acc) {
  record r;
  if (!acc.empty() && acc[0] == 't') {
    r.is_text = true;
    r.text = acc.substr(1);
  } else if (acc.size() == 9) {
    std::memcpy(&r.num, acc.data() + 1, 8);
  } else {
    throw operator_error("a reduce's keyed state is malformed");
  }
  return r;
}

window_aggregate_function
reduce_function(std::function<record(record&&, record&&)> f) {
  auto reduce = std::make_shared<std::function<record(record&&, record&&)>>(
    std::move(f));
  window_aggregate_function out;
  out.create = [] { return std::string{}; };
  out.add = [reduce](std::string& acc, const record& r) {
    acc = acc.empty() ? encode_record_value(r)
                      : encode_record_value((*reduce)(decode_record_value(acc),
                                                      record{r}));
  };
  out.merge = [reduce](std::string& acc, const std::string& other) {
    if (other.empty())
      return;
    acc = acc.empty() ? other
                      : encode_record_value((*reduce)(
                          decode_record_value(acc), decode_record_value(other)));
  };
  out.result = [](const std::string& acc) {
    return decode_record_value(acc);
  };
  return out;
}

operator_factory window_function_operator(std::string name,
                                          window_aggregate_function fn) {
  auto f = std::make_shared<const window_aggregate_function>(std::move(fn));
  operator_factory op;
  op.name = name;
  op.make_transform = [f, name](const params& p) -> std::unique_ptr<transform> {
    throw_if(check_function_window(name, p, *f));
    return std::make_unique<windowing::window_transform<function_accumulation>>(
      p, function_accumulation{f});
  };
  op.validate = [f, name](const params& p, role) {
    return check_function_window(name, p, *f);
  };
  op.side_outputs = window_side_outputs;
  op.output_schema = [f, name](const params&, const schema_query& q) {
    derived_schema result;
    auto key = keyed_input(name, q, result.problem);
    if (key)
      result.value = function_window_output(*q.input, *key, f->value_type);
    return result;
  };
  return op;
}

} // namespace weir::ops
