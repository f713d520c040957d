#include "operators/builtin/windows.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <memory>
#include <optional>
#include <map>
#include <set>
#include <utility>

#include <fmt/format.h>

#include "config/parse.hpp"
#include "operators/builtin/aggregate_codec.hpp"
#include "operators/builtin/aggregation.hpp"
#include "operators/builtin/window_operator.hpp"
#include "operators/key_codec.hpp"
#include "operators/keyed_timers.hpp"
#include "operators/params.hpp"
#include "storage/state/heap_backend.hpp"
#include "storage/state/value_state.hpp"

namespace weir::ops {

namespace {

constexpr int64_t lowest = std::numeric_limits<int64_t>::min();
constexpr int64_t highest = std::numeric_limits<int64_t>::max();

/// A row may fall into at most this many sliding windows (size / slide).
constexpr int64_t max_windows_per_row = 1000;

/// The parameters of every window, then those of the built-in
/// aggregations.
const std::vector<param_spec>& window_params(bool builtin_aggregate) {
  static const std::vector<param_spec> own{
    {"type", param_kind::text, true},   {"size", param_kind::text, false},
    {"gap", param_kind::text, false},
    {"slide", param_kind::text, false}, {"offset", param_kind::text, false},
    {"time", param_kind::text, false},
    {"allowed-lateness", param_kind::text, false}};
  static const std::vector<param_spec> all = [] {
    auto specs = own;
    specs.push_back({"aggregate", param_kind::text, false});
    specs.push_back({"field", param_kind::text, false});
    specs.push_back({"as", param_kind::text, false});
    return specs;
  }();
  return builtin_aggregate ? all : own;
}

/// Parameter `name` as a duration in ms ("1 min", "500 ms"); a problem
/// naming it when it is not one or is below `least`.
std::optional<int64_t> duration_param(const params& p, const std::string& name,
                                      int64_t least, std::string& problem) {
  auto i = p.find(name);
  if (i == p.end())
    return std::nullopt;
  auto d = detail::parse_value<std::chrono::milliseconds>(i->second);
  if (!d) {
    problem = fmt::format("parameter '{}': '{}' is not a duration (e.g. "
                          "\"1 min\", \"500 ms\")",
                          name, i->second);
    return std::nullopt;
  }
  if (d->count() < least) {
    problem = fmt::format("parameter '{}': {} ms is below {} ms", name,
                          d->count(), least);
    return std::nullopt;
  }
  return d->count();
}

/// The aggregation of a window operator (`aggregate`, default count).
std::optional<aggregation_kind> window_aggregation(const params& p,
                                                   std::string& problem) {
  auto name = text_param(p, "aggregate", "count");
  auto kind = parse_aggregation_kind(name);
  if (!kind)
    problem = fmt::format("parameter 'aggregate': unknown aggregation '{}' "
                          "(known: avg, count, max, min, sum)",
                          name);
  return kind;
}

/// The window's aggregation plan: its key fields, window_start and
/// window_end (timestamps), then the aggregate.
planned_aggregation plan_window(aggregation_kind kind, const params& p,
                                const schema& input,
                                const std::vector<size_t>& key) {
  params own;
  for (auto name : {"field", "as"})
    if (auto i = p.find(name); i != p.end())
      own.insert(*i);
  auto planned = plan_aggregation(kind, own, input, key);
  if (!planned.problem.empty())
    return planned;
  auto& fields = planned.plan.output.fields;
  auto value = fields.back();
  fields.pop_back();
  for (auto name : {"window_start", "window_end"}) {
    if (planned.plan.output.find(name) || value.name == name) {
      planned.problem = fmt::format(
        "the output field '{}' would appear twice (rename the key or the "
        "aggregate with \"as\")",
        name);
      return planned;
    }
    fields.push_back(field{name, field_type::timestamp, false});
  }
  fields.push_back(std::move(value));
  return planned;
}

/// The built-in aggregations (count, sum, min, max, avg) as what a window
/// accumulates: one `aggregate` per key and window.
class builtin_accumulation {
public:
  using value = aggregate;

  explicit builtin_accumulation(params p) : params_(std::move(p)) {}
  builtin_accumulation(builtin_accumulation&& other) noexcept
    : params_(std::move(other.params_)), name_(std::move(other.name_)) {
    // folder_ points into plan_: planned again after a move.
  }

  void plan(const schema& input, const std::vector<size_t>& key) {
    std::string problem;
    auto kind = window_aggregation(params_, problem);
    throw_if(problem);
    auto planned = plan_window(*kind, params_, input, key);
    throw_if(planned.problem);
    plan_ = std::move(planned.plan);
    folder_.emplace(plan_);
    name_ = "window-" + to_string(*kind);
  }
  const schema& output() const { return plan_.output; }
  const std::string& state_name() const { return name_; }
  aggregate initial() const { return {}; }
  void fold(aggregate& a, const row_batch& in, size_t r, bool partial,
            const key_codec& keys) const {
    folder_->fold(a, in, r, partial, keys);
  }
  void merge(aggregate& a, const aggregate& b, std::string_view key) const {
    folder_->merge(a, b, key);
  }
  void emit(const aggregate& a, row_batch& out, size_t) const {
    folder_->emit(a, out);
  }

private:
  params params_;
  aggregation_plan plan_;
  std::optional<aggregate_folder> folder_;
  std::string name_;
};

std::string check_window(const params& p) {
  if (auto problem = check_window_params("window", p, true); !problem.empty())
    return problem;
  std::string problem;
  window_aggregation(p, problem);
  return problem;
}

} // namespace

namespace {

/// Session windows take a gap and allowed-lateness, nothing of the fixed
/// windows' lengths.
parsed_window_spec& parse_session(const params& p, parsed_window_spec& out) {
  auto& w = out.spec;
  auto& problem = out.problem;
  w.type = window_spec::kind::session;
  for (auto name : {"size", "slide", "offset"})
    if (p.count(name) != 0) {
      problem = fmt::format("parameter '{}': session windows have none (their "
                            "length is their rows' and the gap)",
                            name);
      return out;
    }
  auto gap = duration_param(p, "gap", 1, problem);
  if (!problem.empty())
    return out;
  if (!gap) {
    problem = "parameter 'gap': missing (how far apart a key's rows may be "
              "in one session)";
    return out;
  }
  w.gap_ms = *gap;
  auto lateness = duration_param(p, "allowed-lateness", 0, problem);
  w.allowed_lateness_ms = lateness.value_or(0);
  return out;
}

} // namespace

std::string check_window_params(const std::string& op, const params& p,
                                bool builtin_aggregate) {
  if (auto problem = check_params(op, p, window_params(builtin_aggregate));
      !problem.empty())
    return problem;
  return parse_window_spec(p).problem;
}

std::map<std::string, schema> window_side_outputs(const params& p,
                                                  const schema_query& q) {
  // Late rows, as they came, for event-time windows (nothing is late in
  // processing time).
  std::map<std::string, schema> out;
  if (q.input != nullptr && !parse_window_spec(p).spec.processing_time)
    out.emplace("late", *q.input);
  return out;
}

parsed_window_spec parse_window_spec(const params& p) {
  parsed_window_spec out;
  auto& w = out.spec;
  auto& problem = out.problem;
  auto time = text_param(p, "time", "event");
  if (time != "event" && time != "processing") {
    problem = fmt::format("parameter 'time': unknown time '{}' (known: "
                          "event, processing)",
                          time);
    return out;
  }
  w.processing_time = time == "processing";
  if (w.processing_time && p.count("allowed-lateness") != 0) {
    problem = "parameter 'allowed-lateness': processing-time windows have no "
              "late rows (the clock puts each row in an open window)";
    return out;
  }
  auto type = text_param(p, "type", "");
  if (type == "tumbling") {
    w.type = window_spec::kind::tumbling;
  } else if (type == "sliding") {
    w.type = window_spec::kind::sliding;
  } else if (type == "session") {
    return parse_session(p, out);
  } else {
    problem = fmt::format("parameter 'type': unknown window type '{}' "
                          "(known: session, sliding, tumbling)",
                          type);
    return out;
  }
  auto size = duration_param(p, "size", 1, problem);
  if (!problem.empty())
    return out;
  if (!size) {
    problem = "parameter 'size': missing";
    return out;
  }
  w.size_ms = *size;
  w.slide_ms = w.size_ms;
  if (p.count("gap") != 0) {
    problem = "parameter 'gap': only session windows have one";
    return out;
  }
  auto slide = duration_param(p, "slide", 1, problem);
  if (!problem.empty())
    return out;
  if (w.type == window_spec::kind::sliding) {
    if (!slide) {
      problem = "parameter 'slide': missing (how far apart sliding windows "
                "start)";
      return out;
    }
    if (w.size_ms / *slide > max_windows_per_row) {
      problem = fmt::format("parameter 'slide': size / slide puts a row in "
                            "{} windows; at most {}",
                            w.size_ms / *slide, max_windows_per_row);
      return out;
    }
    w.slide_ms = *slide;
  } else if (slide) {
    problem = "parameter 'slide': only sliding windows have one";
    return out;
  }
  auto lateness = duration_param(p, "allowed-lateness", 0, problem);
  if (!problem.empty())
    return out;
  w.allowed_lateness_ms = lateness.value_or(0);
  auto offset = duration_param(p, "offset", 0, problem);
  if (!problem.empty())
    return out;
  if (offset) {
    if (*offset >= w.slide_ms) {
      problem = fmt::format("parameter 'offset': {} ms is not below the "
                            "{} of {} ms",
                            *offset,
                            w.type == window_spec::kind::sliding ? "slide"
                                                                 : "size",
                            w.slide_ms);
      return out;
    }
    w.offset_ms = *offset;
  }
  return out;
}

void assign_windows(const window_spec& w, int64_t t,
                    std::vector<int64_t>& starts) {
  // In 128 bits: event times near the ends of int64 do not wrap.
  using wide = __int128;
  wide slide = w.slide_ms;
  wide rem = (wide{t} - w.offset_ms) % slide;
  if (rem < 0)
    rem += slide;
  wide start = wide{t} - rem;
  for (; start > wide{t} - w.size_ms; start -= slide)
    if (start >= lowest)
      starts.push_back(static_cast<int64_t>(start));
}

operator_factory window_factory() {
  operator_factory f;
  f.name = "window";
  f.splits_operator_state = true;
  f.make_transform = [](const params& p) -> std::unique_ptr<transform> {
    throw_if(check_window(p));
    return std::make_unique<windowing::window_transform<builtin_accumulation>>(
      p, builtin_accumulation{p});
  };
  f.validate = [](const params& p, role) { return check_window(p); };
  f.side_outputs = window_side_outputs;
  f.output_schema = [](const params& p, const schema_query& q) {
    derived_schema result;
    auto key = keyed_input("window", q, result.problem);
    if (!key)
      return result;
    std::string problem;
    auto kind = window_aggregation(p, problem);
    if (!kind) {
      result.problem = problem;
      return result;
    }
    auto planned = plan_window(*kind, p, *q.input, *key);
    result.value = std::move(planned.plan.output);
    result.problem = std::move(planned.problem);
    return result;
  };
  return f;
}

} // namespace weir::ops
