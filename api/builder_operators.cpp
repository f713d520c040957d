#include "api/builder_operators.hpp"

#include <memory>

#include <fmt/format.h>

#include "operators/record_transform.hpp"
#include "operators/state_codec.hpp"
#include "storage/state/value_state.hpp"

namespace weir::api_ops {

namespace {

class select_key : public ops::record_transform {
public:
  explicit select_key(
    std::shared_ptr<const std::function<std::string(const record&)>> f)
    : f_(std::move(f)) {}

protected:
  void apply(std::vector<record>& in, std::vector<record>& out,
             bool) override {
    for (auto& r : in) {
      r.key = (*f_)(r);
      out.push_back(std::move(r));
    }
  }

private:
  std::shared_ptr<const std::function<std::string(const record&)>> f_;
};

class reduce_transform : public ops::record_transform {
public:
  explicit reduce_transform(
    std::shared_ptr<const std::function<record(record&&, record&&)>> f)
    : f_(std::move(f)) {}

  bool uses_keyed_state() const override { return true; }

protected:
  void open_records(const ops::operator_context& ctx) override {
    state_ = ctx.keyed_state;
    last_.emplace(*state_, "reduce");
  }

  void apply(std::vector<record>& in, std::vector<record>& out,
             bool) override {
    for (auto& r : in) {
      // The backend keeps a view of the key: one that outlives the record.
      auto key = r.key;
      state_->set_current_key(key);
      auto before = last_->value();
      auto ts = r.timestamp;
      record next = std::move(r);
      if (before) {
        auto last = ops::decode_record_value(*before);
        last.key = key;
        next = (*f_)(std::move(last), std::move(next));
      }
      next.key = key; // the key stays the key (a keyed stream's contract)
      next.timestamp = ts;
      last_->update(ops::encode_record_value(next));
      out.push_back(std::move(next));
    }
  }

private:
  std::shared_ptr<const std::function<record(record&&, record&&)>> f_;
  state::keyed_backend* state_ = nullptr;
  std::optional<state::value_state<std::string>> last_;
};

class co_transform : public ops::transform {
public:
  co_transform(std::shared_ptr<const co_function> first,
               std::shared_ptr<const co_function> second)
    : fs_{std::move(first), std::move(second)} {}

  void open(const ops::operator_context& ctx) override {
    name_ = ctx.vertex_id;
    for (auto& input : ctx.inputs)
      inputs_.push_back(*input.rows);
    output_ = *ctx.output;
  }

  void process(row_batch& in, row_batch& out, bool) override {
    process_input(0, in, out);
  }

  void process_input(size_t input, row_batch& in, row_batch& out) override {
    auto& f = *fs_[input == 0 ? 0 : 1];
    results_.clear();
    for (size_t i = 0; i < in.rows; ++i)
      f(to_record(in, inputs_[input], i), results_);
    ops::append_records(out, output_, results_, name_);
  }

private:
  std::shared_ptr<const co_function> fs_[2];
  std::string name_;
  std::vector<schema> inputs_;
  schema output_;
  std::vector<record> results_;
};

/// `s` with a key: (key: string, value) of its value's type.
std::optional<schema> keyed(const schema& s) {
  if (s == default_schema::numbers() || s == default_schema::keyed_numbers())
    return default_schema::keyed_numbers();
  if (s == default_schema::lines() || s == default_schema::keyed_lines())
    return default_schema::keyed_lines();
  return std::nullopt;
}

std::string not_records(const char* what, const schema& s) {
  return fmt::format("{} reads records: its input must be (value), or (key, "
                     "value), of int64 or string, not {}",
                     what, to_string(s));
}

} // namespace

ops::operator_factory
key_selector(std::function<std::string(const record&)> selector) {
  auto f = std::make_shared<const std::function<std::string(const record&)>>(
    std::move(selector));
  ops::operator_factory op;
  op.name = "key_by";
  op.make_transform = [f](const ops::params&) {
    return std::make_unique<select_key>(f);
  };
  op.output_schema = [](const ops::params&, const ops::schema_query& q) {
    ops::derived_schema out;
    if (q.input == nullptr)
      return out;
    if (auto k = keyed(*q.input))
      out.value = *k;
    else
      out.problem = not_records("a key selector lambda", *q.input);
    return out;
  };
  return op;
}

ops::operator_factory
rolling_reduce(std::function<record(record&&, record&&)> reduce) {
  auto f = std::make_shared<const std::function<record(record&&, record&&)>>(
    std::move(reduce));
  ops::operator_factory op;
  op.name = "reduce";
  op.make_transform = [f](const ops::params&) {
    return std::make_unique<reduce_transform>(f);
  };
  op.output_schema = [](const ops::params&, const ops::schema_query& q) {
    ops::derived_schema out;
    if (q.input == nullptr)
      return out;
    if (q.key.empty())
      out.problem = "reduce needs a keyed input: key_by() before it";
    else if (*q.input != default_schema::keyed_numbers()
             && *q.input != default_schema::keyed_lines())
      out.problem = not_records("reduce", *q.input);
    else
      out.value = *q.input;
    return out;
  };
  return op;
}

ops::operator_factory co_flat_map(co_function first, co_function second,
                                  std::optional<schema> output) {
  auto a = std::make_shared<const co_function>(std::move(first));
  auto b = std::make_shared<const co_function>(std::move(second));
  ops::operator_factory op;
  op.name = "co_flat_map";
  op.two_inputs = true;
  op.make_transform = [a, b](const ops::params&) {
    return std::make_unique<co_transform>(a, b);
  };
  op.output_schema = [output](const ops::params&,
                              const ops::schema_query& q) {
    ops::derived_schema out;
    if (q.inputs.size() != 2) {
      out.problem = fmt::format("connected streams are two inputs, not {}",
                                q.inputs.size());
      return out;
    }
    for (auto& side : q.inputs)
      if (!default_schema::matches(*side.rows)) {
        out.problem = not_records("a co-map", *side.rows);
        return out;
      }
    out.value = output ? *output : *q.inputs[0].rows;
    if (!default_schema::matches(out.value))
      out.problem = not_records("a co-map's output", out.value);
    return out;
  };
  return op;
}

} // namespace weir::api_ops
