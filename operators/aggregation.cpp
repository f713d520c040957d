#include "operators/aggregation.hpp"

#include <algorithm>

#include "operators/builtins.hpp"
#include "operators/state_codec.hpp"
#include "operators/params.hpp"

namespace weir::ops {

namespace {

constexpr size_t initial_buckets = 1024;

int64_t wrapping_add(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a)
                              + static_cast<uint64_t>(b));
}

/// count, sum, min or max as a transform. Bounded jobs emit one record per
/// key, sorted by key, in finish(); streaming jobs emit the new aggregate of
/// every key a batch changed right after that batch, and nothing in finish().
class aggregation_transform : public transform {
public:
  explicit aggregation_transform(aggregation_kind kind)
    : aggregation_(kind, false) {
  }

  void open(const operator_context& ctx) override {
    streaming_ = !ctx.bounded;
    aggregation_ = keyed_aggregation{aggregation_.kind(), streaming_};
  }

  void process(std::vector<record>& in, std::vector<record>& out,
               bool partial) override {
    for (auto& r : in)
      aggregation_.add(std::move(r), partial);
    in.clear();
    if (streaming_)
      aggregation_.emit_updates(out);
  }

  void finish(std::vector<record>& out) override {
    if (!streaming_)
      aggregation_.drain_sorted(out);
  }

  std::string snapshot_state() const override {
    state_writer w;
    aggregation_.snapshot(w);
    return w.take();
  }

  void restore_state(const std::string& bytes) override {
    state_reader r{bytes, to_string(aggregation_.kind())};
    aggregation_.restore(r);
  }

private:
  keyed_aggregation aggregation_;
  bool streaming_ = false;
};

} // namespace

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

keyed_aggregation::keyed_aggregation(aggregation_kind kind, bool track_updates)
  : kind_(kind), track_updates_(track_updates) {
  table_.reserve(initial_buckets);
}

void keyed_aggregation::add(record&& r, bool partial) {
  auto value = kind_ == aggregation_kind::count && !partial ? 1 : r.num;
  auto [i, inserted] = table_.try_emplace(std::move(r.key));
  auto& e = i->second;
  if (inserted) {
    e.value = value;
    e.timestamp = r.timestamp;
  } else {
    switch (kind_) {
      case aggregation_kind::count:
      case aggregation_kind::sum:
        e.value = wrapping_add(e.value, value);
        break;
      case aggregation_kind::min:
        e.value = std::min(e.value, value);
        break;
      case aggregation_kind::max:
        e.value = std::max(e.value, value);
        break;
    }
    e.timestamp = std::max(e.timestamp, r.timestamp);
  }
  if (track_updates_ && e.epoch != epoch_) {
    e.epoch = epoch_;
    touched_.push_back(i->first);
  }
}

void keyed_aggregation::drain(std::vector<record>& out) {
  out.reserve(out.size() + table_.size());
  for (const auto& [key, e] : table_)
    out.push_back(record::integer(key, e.value, e.timestamp));
  table_.clear();
  touched_.clear();
}

void keyed_aggregation::drain_sorted(std::vector<record>& out) {
  auto first = static_cast<std::ptrdiff_t>(out.size());
  drain(out);
  std::sort(out.begin() + first, out.end(),
            [](const record& a, const record& b) { return a.key < b.key; });
}

void keyed_aggregation::snapshot(state_writer& w) const {
  w.int64(static_cast<int64_t>(table_.size()));
  for (auto& [key, e] : table_) {
    w.text(key);
    w.int64(e.value);
    w.int64(e.timestamp);
  }
}

void keyed_aggregation::restore(state_reader& r) {
  table_.clear();
  touched_.clear();
  auto n = r.int64();
  for (int64_t i = 0; i < n; ++i) {
    auto key = r.text();
    auto& e = table_[key];
    e.value = r.int64();
    e.timestamp = r.int64();
  }
}

void keyed_aggregation::emit_updates(std::vector<record>& out) {
  out.reserve(out.size() + touched_.size());
  for (auto& key : touched_) {
    const auto& e = table_.find(key)->second;
    out.push_back(record::integer(std::move(key), e.value, e.timestamp));
  }
  touched_.clear();
  ++epoch_;
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
