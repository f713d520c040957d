#include "operators/builtin/interval_join.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "config/parse.hpp"
#include "operators/key_codec.hpp"
#include "operators/keyed_timers.hpp"
#include "operators/params.hpp"
#include "storage/state/codec.hpp"
#include "storage/state/heap_backend.hpp"

namespace weir::ops {

namespace {

constexpr int64_t lowest = std::numeric_limits<int64_t>::min();
constexpr int64_t highest = std::numeric_limits<int64_t>::max();

const std::vector<param_spec>& join_params() {
  static const std::vector<param_spec> specs{
    {"left", param_kind::text, true},
    {"right", param_kind::text, true},
    {"lower", param_kind::text, true},
    {"upper", param_kind::text, true}};
  return specs;
}

/// `a + b`, held at the ends of int64.
int64_t add_saturating(int64_t a, int64_t b) {
  if (b > 0 && a > highest - b)
    return highest;
  if (b < 0 && a < lowest - b)
    return lowest;
  return a + b;
}

/// Parameter `name` as a signed duration in ms ("-5 s", "10 s", "0").
std::optional<int64_t> signed_duration(const params& p, const std::string& name,
                                       std::string& problem) {
  auto text = text_param(p, name);
  std::string_view rest{text};
  bool negative = !rest.empty() && rest.front() == '-';
  if (negative)
    rest.remove_prefix(1);
  auto d = detail::parse_value<std::chrono::milliseconds>(std::string{rest});
  if (!d || d->count() < 0) {
    problem = fmt::format("parameter '{}': '{}' is not a duration (e.g. "
                          "\"-5 s\", \"10 s\", \"500 ms\")",
                          name, text);
    return std::nullopt;
  }
  return negative ? -d->count() : d->count();
}

/// The fields of both sides in the output: the left's, then the right's
/// that are not its key.
struct join_plan {
  size_t left = 0;  // index of the left input in the query's inputs
  size_t right = 1;
  std::vector<size_t> right_values; // the right's non-key fields
  schema output;
};

std::string names_of(const std::vector<schema_query::side>& sides) {
  std::vector<std::string> names;
  for (auto& s : sides)
    names.push_back(s.from);
  return join_sorted(names);
}

/// Checks how the two inputs fit together and plans the output; "" or the
/// problem as one line.
std::string plan_join(const params& p, const schema_query& q, join_plan& out) {
  if (q.inputs.size() != 2)
    return fmt::format("interval_join takes two inputs (edges into it); it "
                       "has {}",
                       q.inputs.size());
  auto find = [&](const char* name, size_t& index) -> std::string {
    auto from = text_param(p, name);
    for (size_t i = 0; i < q.inputs.size(); ++i)
      if (q.inputs[i].from == from) {
        index = i;
        return {};
      }
    return fmt::format("parameter '{}': '{}' is not an input of this vertex "
                       "(its inputs: {})",
                       name, from, names_of(q.inputs));
  };
  if (auto problem = find("left", out.left); !problem.empty())
    return problem;
  if (auto problem = find("right", out.right); !problem.empty())
    return problem;
  if (out.left == out.right)
    return "parameters 'left' and 'right': the same input; join two "
           "different vertices";
  auto& l = q.inputs[out.left];
  auto& r = q.inputs[out.right];
  for (auto* side : {&l, &r})
    if (side->key.empty())
      return fmt::format("the edge from '{}' is not keyed: both inputs of an "
                         "interval join are \"hash\" partitioned by the join "
                         "key",
                         side->from);
  auto key_text = [](const schema_query::side& s) {
    std::vector<std::string> parts;
    for (auto& name : s.key) {
      auto i = s.rows->find(name);
      parts.push_back(i ? name + ": " + std::string{to_string(s.rows->fields[*i].type)}
                        : name);
    }
    return fmt::format("({})", fmt::join(parts, ", "));
  };
  bool same = l.key.size() == r.key.size();
  for (size_t k = 0; same && k < l.key.size(); ++k) {
    auto a = l.rows->find(l.key[k]);
    auto b = r.rows->find(r.key[k]);
    same = a && b && l.rows->fields[*a].type == r.rows->fields[*b].type
           && l.rows->fields[*a].nullable == r.rows->fields[*b].nullable;
  }
  if (!same)
    return fmt::format("the keys differ: '{}' is keyed by {}, '{}' by {} "
                       "(the same types, nullable or not, in the same order)",
                       l.from, key_text(l), r.from, key_text(r));
  out.output = *l.rows;
  out.right_values.clear();
  for (size_t f = 0; f < r.rows->fields.size(); ++f) {
    auto& field = r.rows->fields[f];
    if (std::find(r.key.begin(), r.key.end(), field.name) != r.key.end())
      continue;
    if (out.output.find(field.name))
      return fmt::format("field '{}' is in both inputs; rename one with a "
                         "map before the join",
                         field.name);
    out.right_values.push_back(f);
    out.output.fields.push_back(field);
  }
  return {};
}

std::string check_join(const params& p) {
  if (auto problem = check_params("interval_join", p, join_params());
      !problem.empty())
    return problem;
  return parse_join_bounds(p).problem;
}

/// Rows of one input waiting for matches: per key and event time, the
/// rows' encoded fields, each after its 4-byte length, in one state entry
/// whose store key is the key's map prefix then the time (sortable), so
/// that one key's rows in a time range are one ordered scan.
class join_buffer {
public:
  join_buffer(state::keyed_backend& b, const std::string& name)
    : column_(&b.column(name, state::state_type::map)) {}

  void add(std::string_view key, int64_t t, std::string_view row) {
    entry(key, t);
    std::string rows;
    column_->get(entry_, rows);
    auto n = static_cast<uint32_t>(row.size());
    rows.append(reinterpret_cast<const char*>(&n), 4);
    rows.append(row.data(), row.size());
    column_->put(entry_, rows);
  }

  /// Calls `f(t, row)` for each row of `key` with a time in [from, to].
  template <class F>
  void each(std::string_view key, int64_t from, int64_t to, F&& f) {
    entry(key, from);
    auto prefix = entry_.size() - 8;
    column_->scan_from(entry_, [&](std::string_view k, std::string_view v) {
      if (k.size() != prefix + 8
          || k.compare(0, prefix, std::string_view{entry_}.substr(0, prefix))
               != 0)
        return false;
      auto t = state::codec<int64_t>::decode(k.substr(prefix));
      if (t > to)
        return false;
      while (v.size() >= 4) {
        uint32_t n = 0;
        std::memcpy(&n, v.data(), 4);
        if (v.size() - 4 < n)
          break;
        f(t, v.substr(4, n));
        v.remove_prefix(4 + n);
      }
      if (!v.empty())
        throw operator_error("an interval join's keyed state is malformed");
      return true;
    });
  }

  void remove(std::string_view key, int64_t t) {
    entry(key, t);
    column_->remove(entry_);
  }

private:
  void entry(std::string_view key, int64_t t) {
    entry_ = state::map_key_prefix(key);
    state::codec<int64_t>::append(entry_, t);
  }

  state::kv_column* column_;
  std::string entry_;
};

/// Flink's IntervalJoinOperator on typed rows: each row is kept in its
/// input's buffer until the watermark passes the last time a row of the
/// other input could match it (an event-time timer removes it then), and
/// joined at once with the other input's buffered rows in its range.
class interval_join final : public transform {
public:
  explicit interval_join(params p) : params_(std::move(p)) {}

  bool uses_keyed_state() const override { return true; }

  void open(const operator_context& ctx) override {
    bounds_ = parse_join_bounds(params_).bounds;
    schema_query q;
    for (auto& in : ctx.inputs) {
      std::vector<std::string> key;
      for (auto k : in.key)
        key.push_back(in.rows->fields[k].name);
      q.inputs.push_back({in.from, in.rows, key});
    }
    join_plan plan;
    throw_if(plan_join(params_, q, plan));
    left_input_ = plan.left;
    auto& l = ctx.inputs[plan.left];
    auto& r = ctx.inputs[plan.right];
    left_key_ = key_codec(*l.rows, l.key);
    right_key_ = key_codec(*r.rows, r.key);
    std::vector<size_t> all(l.rows->fields.size());
    for (size_t i = 0; i < all.size(); ++i)
      all[i] = i;
    left_row_ = key_codec(*l.rows, all);
    right_row_ = key_codec(*r.rows, plan.right_values);
    left_width_ = all.size();
    keyed_ = ctx.keyed_state;
    if (keyed_ == nullptr) { // used outside a subtask (tests, tools)
      own_ = std::make_unique<state::heap_backend>();
      keyed_ = own_.get();
    }
    timers_ = ctx.timers;
    if (timers_ == nullptr) {
      own_timers_ = std::make_unique<keyed_timers>(*keyed_);
      timers_ = own_timers_.get();
    }
    left_.emplace(*keyed_, "join-left");
    right_.emplace(*keyed_, "join-right");
    late_ = ctx.counter("numLateRecordsDropped");
  }

  void process(row_batch&, row_batch&, bool) override {
    throw operator_error("interval_join: a batch without its input");
  }

  void process_input(size_t input, row_batch& in, row_batch& out) override {
    bool left = input == left_input_;
    auto watermark = timers_->current_watermark();
    auto& keys = left ? left_key_ : right_key_;
    auto& rows = left ? left_row_ : right_row_;
    auto& mine = left ? *left_ : *right_;
    auto& other = left ? *right_ : *left_;
    for (size_t r = 0; r < in.rows; ++r) {
      auto t = in.time(r);
      if (t <= watermark) { // no row at or below the watermark comes now
        late_.inc();
        continue;
      }
      key_.assign(keys.encode(in, r, scratch_));
      keyed_->set_current_key(key_);
      row_.assign(rows.encode(in, r, scratch_));
      mine.add(key_, t, row_);
      // The other input's rows in range: [t + lower, t + upper] for a left
      // row, [t - upper, t - lower] for a right one.
      auto from = left ? add_saturating(t, bounds_.lower_ms)
                       : add_saturating(t, -bounds_.upper_ms);
      auto to = left ? add_saturating(t, bounds_.upper_ms)
                     : add_saturating(t, -bounds_.lower_ms);
      other.each(key_, from, to, [&](int64_t other_t, std::string_view match) {
        emit(left ? row_ : match, left ? match : row_, std::max(t, other_t),
             out);
      });
      timers_->register_event_time_timer(cleanup_time(left, t));
    }
  }

  /// The watermark passed a row's last chance: it leaves its buffer.
  void on_timer(int64_t time, time_domain domain, row_batch&) override {
    if (domain != time_domain::event_time)
      return;
    auto key = keyed_->current_key();
    for (bool left : {true, false}) {
      // The row time whose cleanup time this is, if any.
      auto lag = left ? std::max<int64_t>(bounds_.upper_ms, 0)
                      : std::max<int64_t>(-bounds_.lower_ms, 0);
      if ((time == highest && lag > 0) || time < lowest + lag)
        continue; // no row's cleanup time (saturated, or before any)
      (left ? *left_ : *right_).remove(key, time - lag);
    }
  }

private:
  /// When a row at `t` can match no more rows of the other input: once
  /// the watermark passed its time plus the bound on its side (Flink's
  /// cleanup time).
  int64_t cleanup_time(bool left, int64_t t) const {
    auto lag = left ? bounds_.upper_ms : -bounds_.lower_ms;
    return lag > 0 ? add_saturating(t, lag) : t;
  }

  void emit(std::string_view left_row, std::string_view right_row,
            int64_t time, row_batch& out) {
    left_row_.decode(left_row, out, 0);
    right_row_.decode(right_row, out, left_width_);
    ++out.rows;
    out.push_time(time); // Flink: the larger of the two times
  }

  params params_;
  join_bounds bounds_;
  size_t left_input_ = 0;
  key_codec left_key_;
  key_codec right_key_;
  key_codec left_row_;
  key_codec right_row_;
  size_t left_width_ = 0;
  state::keyed_backend* keyed_ = nullptr;
  std::unique_ptr<state::keyed_backend> own_;
  timer_service* timers_ = nullptr;
  std::unique_ptr<keyed_timers> own_timers_;
  std::optional<join_buffer> left_;
  std::optional<join_buffer> right_;
  counter late_;
  std::string key_;
  std::string row_;
  std::string scratch_;
};

} // namespace

parsed_join_bounds parse_join_bounds(const params& p) {
  parsed_join_bounds out;
  for (auto name : {"lower", "upper"})
    if (p.count(name) == 0) {
      out.problem = fmt::format("parameter '{}': missing", name);
      return out;
    }
  auto lower = signed_duration(p, "lower", out.problem);
  if (!lower)
    return out;
  auto upper = signed_duration(p, "upper", out.problem);
  if (!upper)
    return out;
  if (*lower > *upper) {
    out.problem = fmt::format("parameters 'lower' and 'upper': {} ms is "
                              "above {} ms",
                              *lower, *upper);
    return out;
  }
  out.bounds = {*lower, *upper};
  return out;
}

operator_factory interval_join_factory() {
  operator_factory f;
  f.name = "interval_join";
  f.two_inputs = true;
  f.make_transform = [](const params& p) -> std::unique_ptr<transform> {
    throw_if(check_join(p));
    return std::make_unique<interval_join>(p);
  };
  f.validate = [](const params& p, role) { return check_join(p); };
  f.output_schema = [](const params& p, const schema_query& q) {
    derived_schema result;
    join_plan plan;
    result.problem = plan_join(p, q, plan);
    result.value = std::move(plan.output);
    return result;
  };
  return f;
}

} // namespace weir::ops
