#include "operators/builtin/aggregation.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <optional>

#include <absl/container/flat_hash_set.h>
#include <absl/strings/string_view.h>
#include <fmt/format.h>

#include "operators/builtin/aggregate_codec.hpp"
#include "operators/builtin/builtins.hpp"
#include "operators/params.hpp"
#include "storage/state/value_state.hpp"

namespace weir::ops {

// -- planning -----------------------------------------------------------------

std::string to_string(aggregation_kind kind) {
  switch (kind) {
    case aggregation_kind::count:
      return "count";
    case aggregation_kind::sum:
      return "sum";
    case aggregation_kind::min:
      return "min";
    case aggregation_kind::max:
      return "max";
    case aggregation_kind::avg:
      return "avg";
  }
  return "unknown";
}

std::optional<aggregation_kind>
parse_aggregation_kind(const std::string& name) {
  for (auto kind : {aggregation_kind::count, aggregation_kind::sum,
                    aggregation_kind::min, aggregation_kind::max,
                    aggregation_kind::avg})
    if (name == to_string(kind))
      return kind;
  return std::nullopt;
}

namespace {

const std::vector<param_spec>& aggregation_params(aggregation_kind kind) {
  static const std::vector<param_spec> count_params{
    {"as", param_kind::text, false}};
  static const std::vector<param_spec> field_params{
    {"field", param_kind::text, false}, {"as", param_kind::text, false}};
  return kind == aggregation_kind::count ? count_params : field_params;
}

} // namespace

planned_aggregation plan_aggregation(aggregation_kind kind, const params& p,
                                     const schema& input,
                                     const std::vector<size_t>& key) {
  planned_aggregation result;
  auto& plan = result.plan;
  plan.kind = kind;
  plan.key = key;
  auto name = to_string(kind);
  bool legacy = default_schema::matches(input) && p.count("as") == 0;
  for (auto k : key)
    plan.output.fields.push_back(input.fields[k]);
  field out;
  if (kind == aggregation_kind::count) {
    out = {legacy ? "value" : text_param(p, "as", "count"), field_type::int64,
           false};
  } else {
    auto field_name = text_param(p, "field", "value");
    auto f = input.find(field_name);
    if (!f) {
      result.problem = p.count("field") == 0
        ? fmt::format("{} needs a field to aggregate: give \"field\" (the "
                      "input is {})",
                      name, to_string(input))
        : fmt::format("parameter 'field': '{}' is not in {}", field_name,
                      to_string(input));
      return result;
    }
    plan.field = *f;
    auto type = input.fields[*f].type;
    bool numeric = type == field_type::int64 || type == field_type::float64;
    bool ordered = numeric || type == field_type::timestamp;
    if (kind == aggregation_kind::min || kind == aggregation_kind::max
          ? !ordered
          : !numeric) {
      result.problem = fmt::format(
        "field '{}' is {}: {} needs int64 or double{}", field_name,
        to_string(type), name,
        kind == aggregation_kind::min || kind == aggregation_kind::max
          ? " or timestamp"
          : "");
      return result;
    }
    out.name = text_param(p, "as", field_name);
    out.type = kind == aggregation_kind::avg ? field_type::float64 : type;
    out.nullable = input.fields[*f].nullable;
  }
  if (plan.output.find(out.name)) {
    result.problem = fmt::format(
      "the aggregate's name '{}' is a key field too: give \"as\"", out.name);
    return result;
  }
  plan.output.fields.push_back(std::move(out));
  return result;
}

// -- folding ------------------------------------------------------------------

namespace {

/// Folds int64 `v` into `a`: count and sum add it, min and max keep the
/// extreme. False on int64 overflow (`a` unchanged). The one int64 fold of
/// the general path and the combiner's hot path.
inline bool fold_int(aggregate& a, aggregation_kind kind, int64_t v) {
  if (kind == aggregation_kind::count || kind == aggregation_kind::sum) {
    int64_t n = 0;
    if (__builtin_add_overflow(a.i, v, &n))
      return false;
    a.i = n;
  } else if (a.count == 0) {
    a.i = v;
  } else {
    a.i = kind == aggregation_kind::min ? std::min(a.i, v) : std::max(a.i, v);
  }
  a.count = 1;
  return true;
}

} // namespace

void aggregate_folder::fold(aggregate& a, const row_batch& b, size_t row,
                            bool partial, const key_codec& keys) const {
  auto& plan = *plan_;
  auto ts = b.time(row);
  auto kind = plan.kind;
  if (kind == aggregation_kind::count) {
    int64_t add = partial ? b.columns[plan.key.size()].ints[row] : 1;
    if (!fold_int(a, kind, add))
      throw_overflow("count", keys.describe(b, row), add);
    a.timestamp = std::max(a.timestamp, ts);
    return;
  }
  auto& c = b.columns[partial ? plan.key.size() : *plan.field];
  if (c.is_null(row))
    return; // SQL: aggregates skip nulls
  if (kind == aggregation_kind::avg) {
    // Not combinable: rows are always input rows.
    a.d += c.type == field_type::float64 ? c.floats[row]
                                         : static_cast<double>(c.ints[row]);
    ++a.count;
  } else if (c.type == field_type::float64) {
    auto v = c.floats[row];
    if (kind == aggregation_kind::sum)
      a.d += v;
    else if (a.count == 0)
      a.d = v;
    else
      a.d = kind == aggregation_kind::min ? std::min(a.d, v) : std::max(a.d, v);
    a.count = 1;
  } else {
    auto v = c.ints[row];
    if (!fold_int(a, kind, v))
      throw_overflow("sum", keys.describe(b, row), v);
  }
  a.timestamp = std::max(a.timestamp, ts);
}

void aggregate_folder::merge(aggregate& a, const aggregate& b,
                             std::string_view key) const {
  a.timestamp = std::max(a.timestamp, b.timestamp);
  if (b.count == 0)
    return; // nothing (or only nulls) went into b
  auto kind = plan_->kind;
  bool doubles = plan_->value_type() == field_type::float64;
  if (kind == aggregation_kind::avg) {
    a.d += b.d;
    a.count += b.count;
  } else if (kind == aggregation_kind::count
             || kind == aggregation_kind::sum) {
    if (doubles)
      a.d += b.d;
    else if (__builtin_add_overflow(a.i, b.i, &a.i))
      throw_overflow(to_string(kind), key, b.i);
    a.count = 1;
  } else if (a.count == 0) {
    a.i = b.i;
    a.d = b.d;
    a.count = 1;
  } else {
    bool min = kind == aggregation_kind::min;
    if (doubles)
      a.d = min ? std::min(a.d, b.d) : std::max(a.d, b.d);
    else
      a.i = min ? std::min(a.i, b.i) : std::max(a.i, b.i);
  }
}

void aggregate_folder::emit(const aggregate& a, row_batch& out) const {
  auto& c = out.columns.back();
  auto kind = plan_->kind;
  if (kind == aggregation_kind::count) {
    c.push_int(a.i);
  } else if (kind == aggregation_kind::avg) {
    if (a.count == 0)
      c.push_null();
    else
      c.push_float(a.d / static_cast<double>(a.count));
  } else if (a.count == 0 && plan_->output.fields.back().nullable) {
    c.push_null();
  } else if (c.type == field_type::float64) {
    c.push_float(a.d);
  } else {
    c.push_int(a.i);
  }
}

// -- the combiner -------------------------------------------------------------

namespace {

std::vector<size_t> leading(size_t n) {
  std::vector<size_t> v(n);
  std::iota(v.begin(), v.end(), size_t{0});
  return v;
}

aggregation_plan checked_plan(aggregation_kind kind, const params& p,
                              const schema& input,
                              const std::vector<size_t>& key) {
  auto planned = plan_aggregation(kind, p, input, key);
  throw_if(planned.problem);
  return planned.plan;
}

} // namespace

keyed_aggregation::keyed_aggregation(aggregation_kind kind, const params& p,
                                     const schema& input,
                                     const std::vector<size_t>& key)
  : plan_(checked_plan(kind, p, input, key)),
    folder_(plan_),
    keys_(input, key),
    out_keys_(plan_.output, leading(key.size())) {
  // Room for the first keys in the one table this key kind uses: every
  // producer of a hash exchange has a combiner, and three reserved tables
  // took 250 KB each (256 MB at -p 1024).
  if (keys_.single_int())
    ints_.reserve(1024);
  else
    shorts_.reserve(1024);
}

bool keyed_aggregation::add_fast(const row_batch& b, bool partial,
                                 const key_codec& keys) {
  auto kind = plan_.kind;
  if (kind == aggregation_kind::avg)
    return false;
  const std::vector<int64_t>* values = nullptr;
  if (kind != aggregation_kind::count || partial) {
    auto& c = b.columns[partial ? plan_.key.size() : *plan_.field];
    if (!c.nulls.empty() || c.type == field_type::float64)
      return false;
    values = &c.ints;
  }
  bool times = !b.times.empty();
  auto update = [&](aggregate& a, size_t r) {
    int64_t v = values ? (*values)[r] : 1;
    if (!fold_int(a, kind, v))
      throw_overflow(to_string(kind), keys.describe(b, r), v);
    if (times)
      a.timestamp = std::max(a.timestamp, b.times[r]);
  };
  if (keys.single_int()) {
    auto& k = b.columns[keys.fields()[0]].ints;
    for (size_t r = 0; r < b.rows; ++r)
      update(ints_[k[r]], r);
    return true;
  }
  if (keys.single_str()) {
    auto& c = b.columns[keys.fields()[0]];
    // Short keys looked up here, not through of_key(): a call per row
    // halves keyed_sum.json's speed (the lookups no longer overlap).
    for (size_t r = 0; r < b.rows; ++r) {
      auto k = c.str(r);
      update(k.size() <= short_key::max_size ? shorts_[short_key{k}]
                                             : of_key(k),
             r);
    }
    return true;
  }
  return false;
}

void keyed_aggregation::add(const row_batch& b, bool partial) {
  auto& keys = partial ? out_keys_ : keys_;
  if (add_fast(b, partial, keys))
    return;
  if (keys.single_int()) {
    auto& col = b.columns[keys.fields()[0]].ints;
    for (size_t r = 0; r < b.rows; ++r)
      folder_.fold(ints_[col[r]], b, r, partial, keys);
    return;
  }
  for (size_t r = 0; r < b.rows; ++r) {
    auto k = keys.encode(b, r, scratch_);
    folder_.fold(of_key(k), b, r, partial, keys);
  }
}

void keyed_aggregation::drain(row_batch& out) {
  out.reserve(out.rows + size());
  for (auto& [k, a] : ints_) {
    key_codec::decode_int(k, out);
    folder_.emit(a, out);
    ++out.rows;
    out.push_time(a.timestamp);
  }
  for (auto& [k, a] : shorts_) {
    out_keys_.decode(k.view(), out);
    folder_.emit(a, out);
    ++out.rows;
    out.push_time(a.timestamp);
  }
  for (auto& [k, a] : bytes_) {
    out_keys_.decode(k, out);
    folder_.emit(a, out);
    ++out.rows;
    out.push_time(a.timestamp);
  }
  // erase, not clear: clear() frees a large table, and the combiner would
  // grow it again after every drain.
  ints_.erase(ints_.begin(), ints_.end());
  shorts_.erase(shorts_.begin(), shorts_.end());
  bytes_.erase(bytes_.begin(), bytes_.end());
}

// -- the operator -------------------------------------------------------------

namespace {

/// count, sum, min, max or avg as a transform, its aggregates in keyed
/// state (value state named after the aggregation). Bounded jobs emit one
/// row per key, sorted by key, in finish(); streaming jobs emit the new
/// aggregate of every key a batch changed right after that batch, and
/// nothing in finish().
class aggregation_transform : public transform {
public:
  aggregation_transform(aggregation_kind kind, params p)
    : kind_(kind), params_(std::move(p)) {}

  bool uses_keyed_state() const override { return true; }

  void open(const operator_context& ctx) override {
    if (ctx.input == nullptr)
      throw operator_error("an aggregation needs an input");
    plan_ = checked_plan(kind_, params_, *ctx.input, ctx.key);
    folder_.emplace(plan_);
    keys_ = key_codec(*ctx.input, ctx.key);
    out_keys_ = key_codec(plan_.output, leading(ctx.key.size()));
    streaming_ = !ctx.bounded;
    keyed_ = ctx.keyed_state;
    if (keyed_ == nullptr) { // used outside a subtask (tests, tools)
      own_ = std::make_unique<state::heap_backend>();
      keyed_ = own_.get();
    }
    values_.emplace(*keyed_, to_string(kind_));
    values_->reserve(1024);
  }

  void process(row_batch& in, row_batch& out, bool partial) override {
    auto& keys = partial ? out_keys_ : keys_;
    for (size_t r = 0; r < in.rows; ++r) {
      auto k = keys.encode(in, r, scratch_);
      keyed_->set_current_key(k);
      values_->modify([&](aggregate& a, bool) {
        folder_->fold(a, in, r, partial, keys);
      });
      if (streaming_ && touched_set_.insert(std::string{k}).second)
        touched_.emplace_back(k);
    }
    if (!streaming_)
      return;
    for (auto& key : touched_) {
      keyed_->set_current_key(key);
      auto a = values_->value().value_or(aggregate{});
      emit(key, a, out);
    }
    touched_.clear();
    touched_set_.clear();
  }

  void finish(row_batch& out) override {
    if (streaming_)
      return;
    row_batch all(plan_.output);
    values_->for_each(
      [&](std::string_view key, const aggregate& a) { emit(key, a, all); });
    values_->clear_all();
    sort_by_key(all, out);
  }

private:
  void emit(std::string_view key, const aggregate& a, row_batch& out) {
    out_keys_.decode(key, out);
    folder_->emit(a, out);
    ++out.rows;
    out.push_time(a.timestamp);
  }

  /// Appends the rows of `all` to `out` in the order of their key fields.
  void sort_by_key(const row_batch& all, row_batch& out) const {
    std::vector<uint32_t> order(all.rows);
    std::iota(order.begin(), order.end(), 0u);
    auto k = plan_.key.size();
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
      for (size_t f = 0; f < k; ++f) {
        auto& c = all.columns[f];
        if (c.is_null(a) != c.is_null(b))
          return c.is_null(a);
        if (c.is_null(a))
          continue;
        if (holds_chars(c.type)) {
          if (auto cmp = c.str(a).compare(c.str(b)); cmp != 0)
            return cmp < 0;
        } else if (c.type == field_type::float64) {
          if (c.floats[a] != c.floats[b])
            return c.floats[a] < c.floats[b];
        } else if (c.ints[a] != c.ints[b]) {
          return c.ints[a] < c.ints[b];
        }
      }
      return false;
    });
    for (auto i : order)
      out.push_row(all, i);
  }

  aggregation_kind kind_;
  params params_;
  aggregation_plan plan_;
  std::optional<aggregate_folder> folder_;
  key_codec keys_;
  key_codec out_keys_;
  bool streaming_ = false;
  state::keyed_backend* keyed_ = nullptr;
  std::unique_ptr<state::keyed_backend> own_;
  std::optional<state::value_state<aggregate>> values_;
  std::string scratch_;
  /// Streaming: keys changed by the current batch, in order.
  std::vector<std::string> touched_;
  absl::flat_hash_set<std::string> touched_set_;
};

} // namespace

std::optional<std::vector<size_t>> keyed_input(const std::string& op,
                                               const schema_query& q,
                                               std::string& problem) {
  if (q.input == nullptr) {
    problem = fmt::format("{} cannot be a source", op);
    return std::nullopt;
  }
  if (q.key.empty()) {
    problem = fmt::format("{} needs keyed input: its input edge needs "
                          "\"partitioning\": \"hash\"",
                          op);
    return std::nullopt;
  }
  std::vector<size_t> key;
  for (auto& name : q.key) {
    auto i = q.input->find(name);
    if (!i) {
      problem = fmt::format("key field '{}' is not in {}", name,
                            to_string(*q.input));
      return std::nullopt;
    }
    key.push_back(*i);
  }
  return key;
}

operator_factory aggregation_factory(aggregation_kind kind) {
  operator_factory f;
  f.name = to_string(kind);
  f.make_transform = [kind](const params& p) -> std::unique_ptr<transform> {
    throw_if(check_params(to_string(kind), p, aggregation_params(kind)));
    return std::make_unique<aggregation_transform>(kind, p);
  };
  f.validate = [kind](const params& p, role) {
    return check_params(to_string(kind), p, aggregation_params(kind));
  };
  f.output_schema = [kind](const params& p, const schema_query& q) {
    derived_schema result;
    auto key = keyed_input(to_string(kind), q, result.problem);
    if (!key)
      return result;
    auto planned = plan_aggregation(kind, p, *q.input, *key);
    result.value = std::move(planned.plan.output);
    result.problem = std::move(planned.problem);
    return result;
  };
  f.combinable = kind != aggregation_kind::avg;
  return f;
}

} // namespace weir::ops
