#include "operators/aggregation.hpp"

#include <algorithm>
#include <optional>

#include <absl/container/flat_hash_set.h>

#include "operators/builtins.hpp"
#include "operators/params.hpp"
#include "storage/state/value_state.hpp"

namespace weir::state {

template <>
struct codec<ops::aggregate> {
  static void append(std::string& out, const ops::aggregate& a) {
    codec<int64_t>::append(out, a.value);
    codec<int64_t>::append(out, a.timestamp);
  }
  static ops::aggregate decode(std::string_view bytes) {
    if (bytes.size() != 16)
      throw std::runtime_error("an aggregate in keyed state is not 16 bytes");
    return {codec<int64_t>::decode(bytes.substr(0, 8)),
            codec<int64_t>::decode(bytes.substr(8))};
  }
};

} // namespace weir::state

namespace weir::ops {

namespace {

constexpr size_t initial_buckets = 1024;

/// count, sum, min or max as a transform, its aggregates in keyed state
/// (value state named after the aggregation). Bounded jobs emit one record
/// per key, sorted by key, in finish(); streaming jobs emit the new
/// aggregate of every key a batch changed right after that batch, and
/// nothing in finish().
class aggregation_transform : public transform {
public:
  explicit aggregation_transform(aggregation_kind kind) : kind_(kind) {
  }

  bool uses_keyed_state() const override { return true; }

  void open(const operator_context& ctx) override {
    streaming_ = !ctx.bounded;
    keyed_ = ctx.keyed_state;
    if (keyed_ == nullptr) { // used outside a subtask (tests, tools)
      own_ = std::make_unique<state::heap_backend>();
      keyed_ = own_.get();
    }
    values_.emplace(*keyed_, to_string(kind_));
    values_->reserve(initial_buckets);
  }

  void process(std::vector<record>& in, std::vector<record>& out,
               bool partial) override {
    for (auto& r : in) {
      keyed_->set_current_key(r.key);
      values_->modify(
        [&](aggregate& a, bool fresh) { fold(kind_, a, fresh, r, partial); });
      if (streaming_ && touched_set_.insert(r.key).second)
        touched_.push_back(std::move(r.key));
    }
    in.clear();
    if (!streaming_)
      return;
    out.reserve(out.size() + touched_.size());
    for (auto& key : touched_) {
      keyed_->set_current_key(key);
      auto a = values_->value().value_or(aggregate{});
      out.push_back(record::integer(std::move(key), a.value, a.timestamp));
    }
    touched_.clear();
    touched_set_.clear();
  }

  void finish(std::vector<record>& out) override {
    if (streaming_)
      return;
    auto first = static_cast<std::ptrdiff_t>(out.size());
    values_->for_each([&](std::string_view key, const aggregate& a) {
      out.push_back(record::integer(std::string{key}, a.value, a.timestamp));
    });
    values_->clear_all();
    std::sort(out.begin() + first, out.end(),
              [](const record& a, const record& b) { return a.key < b.key; });
  }

private:
  aggregation_kind kind_;
  bool streaming_ = false;
  state::keyed_backend* keyed_ = nullptr;
  std::unique_ptr<state::keyed_backend> own_;
  std::optional<state::value_state<aggregate>> values_;
  /// Streaming: keys changed by the current batch, in order.
  std::vector<std::string> touched_;
  absl::flat_hash_set<std::string> touched_set_;
};

} // namespace

void fold(aggregation_kind kind, aggregate& a, bool fresh, const record& r,
          bool partial) {
  auto value = kind == aggregation_kind::count && !partial ? 1 : r.num;
  if (fresh) {
    a.value = value;
    a.timestamp = r.timestamp;
    return;
  }
  switch (kind) {
    case aggregation_kind::count:
    case aggregation_kind::sum:
      if (int64_t sum = 0; __builtin_add_overflow(a.value, value, &sum))
        throw_overflow(to_string(kind), r.key, value);
      else
        a.value = sum;
      break;
    case aggregation_kind::min:
      a.value = std::min(a.value, value);
      break;
    case aggregation_kind::max:
      a.value = std::max(a.value, value);
      break;
  }
  a.timestamp = std::max(a.timestamp, r.timestamp);
}

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
  }
  return "unknown";
}

std::optional<aggregation_kind>
parse_aggregation_kind(const std::string& name) {
  for (auto kind : {aggregation_kind::count, aggregation_kind::sum,
                    aggregation_kind::min, aggregation_kind::max})
    if (name == to_string(kind))
      return kind;
  return std::nullopt;
}

keyed_aggregation::keyed_aggregation(aggregation_kind kind) : kind_(kind) {
  table_.reserve(initial_buckets);
}

void keyed_aggregation::add(record&& r, bool partial) {
  auto [i, inserted] = table_.try_emplace(std::move(r.key));
  // try_emplace moves the key only into a new entry, which cannot overflow:
  // an overflow's message still has it.
  fold(kind_, i->second, inserted, r, partial);
}

void keyed_aggregation::drain(std::vector<record>& out) {
  out.reserve(out.size() + table_.size());
  for (const auto& [key, e] : table_)
    out.push_back(record::integer(key, e.value, e.timestamp));
  table_.clear();
}

void keyed_aggregation::drain_sorted(std::vector<record>& out) {
  auto first = static_cast<std::ptrdiff_t>(out.size());
  drain(out);
  std::sort(out.begin() + first, out.end(),
            [](const record& a, const record& b) { return a.key < b.key; });
}

operator_factory aggregation_factory(aggregation_kind kind) {
  operator_factory f;
  f.name = to_string(kind);
  f.make_transform = [kind](const params& p) -> std::unique_ptr<transform> {
    throw_if(check_params(to_string(kind), p, {}));
    return std::make_unique<aggregation_transform>(kind);
  };
  f.validate = [kind](const params& p, role) {
    return check_params(to_string(kind), p, {});
  };
  f.combinable = true;
  return f;
}

} // namespace weir::ops
