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

const std::vector<param_spec>& window_params() {
  static const std::vector<param_spec> specs{
    {"type", param_kind::text, true},   {"size", param_kind::text, false},
    {"gap", param_kind::text, false},
    {"slide", param_kind::text, false}, {"offset", param_kind::text, false},
    {"time", param_kind::text, false},  {"aggregate", param_kind::text, false},
    {"field", param_kind::text, false}, {"as", param_kind::text, false},
    {"allowed-lateness", param_kind::text, false}};
  return specs;
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

std::string check_window(const params& p) {
  if (auto problem = check_params("window", p, window_params());
      !problem.empty())
    return problem;
  if (auto problem = parse_window_spec(p).problem; !problem.empty())
    return problem;
  std::string problem;
  window_aggregation(p, problem);
  return problem;
}

/// A key and a window's end in one state key: the key's bytes, then the
/// end as 8 bytes that sort as the signed number does.
void window_key(std::string_view key, int64_t end, std::string& out) {
  out.assign(key.data(), key.size());
  state::codec<int64_t>::append(out, end);
}

/// The end of the window of a state key (what window_key made); a key too
/// short to be one fails the subtask (state from elsewhere).
int64_t end_of(std::string_view window_key) {
  if (window_key.size() < 8)
    throw operator_error("a window's keyed state holds a key of fewer than "
                         "8 bytes");
  return state::codec<int64_t>::decode(window_key.substr(window_key.size() - 8));
}

/// Keyed windows with an incremental aggregate per key and window, in keyed
/// state (the heap or RocksDB); the windows waiting to fire are indexed
/// by their end, rebuilt from that state when it is restored.
class window_transform : public transform {
public:
  explicit window_transform(params p) : params_(std::move(p)) {}

  bool uses_keyed_state() const override { return true; }

  void open(const operator_context& ctx) override {
    if (ctx.input == nullptr)
      throw operator_error("a window needs an input");
    auto parsed = parse_window_spec(params_);
    throw_if(parsed.problem);
    spec_ = parsed.spec;
    std::string problem;
    auto kind = window_aggregation(params_, problem);
    throw_if(problem);
    auto planned = plan_window(*kind, params_, *ctx.input, ctx.key);
    throw_if(planned.problem);
    plan_ = std::move(planned.plan);
    folder_.emplace(plan_);
    keys_ = key_codec(*ctx.input, ctx.key);
    std::vector<size_t> leading(ctx.key.size());
    for (size_t i = 0; i < leading.size(); ++i)
      leading[i] = i;
    out_keys_ = key_codec(plan_.output, leading);
    keyed_ = ctx.keyed_state;
    if (keyed_ == nullptr) { // used outside a subtask (tests, tools)
      own_ = std::make_unique<state::heap_backend>();
      keyed_ = own_.get();
    }
    values_.emplace(*keyed_, "window-" + to_string(*kind));
    if (sessions())
      starts_of_.emplace(*keyed_, "window-start");
    late_ = ctx.counter("numLateRecordsDropped");
    late_rows_ = ctx.side_output("late");
    timers_ = ctx.timers;
    if (timers_ == nullptr) {
      own_timers_ = std::make_unique<keyed_timers>(*keyed_);
      timers_ = own_timers_.get();
    }
    // Restored windows wait to fire again.
    values_->for_each([&](std::string_view k, const aggregate&) {
      pending_.emplace(end_of(k), std::string{k});
    });
    if (sessions())
      for (auto& [end, k] : pending_) {
        keyed_->set_current_key(k);
        auto start = starts_of_->value();
        if (!start)
          throw operator_error("a session window's keyed state has no start");
        sessions_[k.substr(0, k.size() - 8)][*start] = end;
      }
  }

  void process(row_batch& in, row_batch& out, bool partial) override {
    auto& keys = partial ? out_keys_ : keys_;
    if (spec_.processing_time && in.rows > 0) {
      // The clock when the batch arrived is each row's time here.
      auto now = timers_->current_processing_time();
      in.times.assign(in.rows, now);
    }
    for (size_t r = 0; r < in.rows; ++r) {
      auto t = in.time(r);
      if (sessions()) {
        add_to_session(in, r, keys, out);
        continue;
      }
      starts_.clear();
      assign_windows(spec_, t, starts_);
      bool placed = false;
      for (auto start : starts_) {
        auto end = window_end(start);
        if (cleanup_time(end) <= watermark_)
          continue; // that window is gone: too late for it
        placed = true;
        window_key(keys.encode(in, r, scratch_), end, key_);
        keyed_->set_current_key(key_);
        bool fresh_window = false;
        values_->modify([&](aggregate& a, bool fresh) {
          folder_->fold(a, in, r, partial, keys);
          fresh_window = fresh;
        });
        if (fresh_window)
          add_pending(end, key_);
        if (end - 1 <= watermark_) // fired, within its allowed lateness
          emit(end, key_, out);
      }
      if (!placed)
        drop_late(in, r);
    }
  }

  /// Event time: windows whose end the watermark passed fire.
  void on_watermark(int64_t watermark, row_batch& out) override {
    if (!spec_.processing_time)
      advance(watermark, out);
  }

  /// Processing time: the clock passed a window's end.
  void on_timer(int64_t time, time_domain domain, row_batch& out) override {
    if (spec_.processing_time && domain == time_domain::processing_time)
      advance(time, out);
  }

  void finish(row_batch& out) override { advance(highest, out); }

  /// The watermark the window has seen (operator state): after a restore
  /// a row late before is late still, and no fired window fires again.
  std::string snapshot_state() const override {
    std::string out;
    state::codec<int64_t>::append(out, watermark_);
    return out;
  }

  void restore_state(const std::string& bytes) override {
    if (bytes.size() != 8)
      throw operator_error("a window's checkpointed watermark is not 8 bytes");
    watermark_ = state::codec<int64_t>::decode(bytes);
  }

private:
  /// Time (event time's watermark, or the clock) reached `watermark`:
  /// windows whose end it passed fire; those past their allowed lateness
  /// too are removed.
  void advance(int64_t watermark, row_batch& out) {
    auto before = watermark_;
    watermark_ = std::max(watermark_, watermark);
    for (auto i = pending_.begin();
         i != pending_.end() && i->first - 1 <= watermark_;) {
      auto& [end, key] = *i;
      if (end - 1 > before)
        emit(end, key, out);
      if (cleanup_time(end) > watermark_) {
        ++i;
        continue;
      }
      keyed_->set_current_key(key);
      values_->clear();
      if (sessions()) {
        starts_of_->clear();
        forget_session(key, end);
      }
      i = pending_.erase(i);
    }
  }

  /// A window with rows waits to fire; in processing time a timer at its
  /// end wakes the operator then (one per end, under the empty key: firing
  /// goes through every key's windows that end by then).
  void add_pending(int64_t end, const std::string& window_key) {
    pending_.emplace(end, window_key);
    if (!spec_.processing_time)
      return;
    keyed_->set_current_key({});
    timers_->register_processing_time_timer(end - 1);
  }

  int64_t window_end(int64_t start) const {
    return start > highest - spec_.size_ms ? highest : start + spec_.size_ms;
  }

  /// When the window's state goes: once the watermark passed its end by
  /// the allowed lateness (saturating at the highest event time).
  int64_t cleanup_time(int64_t end) const {
    auto last = end - 1;
    return last > highest - spec_.allowed_lateness_ms
             ? highest
             : last + spec_.allowed_lateness_ms;
  }

  bool sessions() const { return spec_.type == window_spec::kind::session; }

  /// Row `r` opens a session [t, t + gap) of its key, merged with every
  /// session of the key it overlaps (Flink's merging windows): their
  /// aggregates become one, under the merged session's end.
  void add_to_session(const row_batch& in, size_t r, const key_codec& keys,
                      row_batch& out) {
    auto t = in.time(r);
    std::string key{keys.encode(in, r, scratch_)};
    auto start = t;
    auto end = t > highest - spec_.gap_ms ? highest : t + spec_.gap_ms;
    auto& mine = sessions_[key];
    std::vector<std::pair<int64_t, int64_t>> overlapping;
    for (auto i = mine.begin(); i != mine.end() && i->first < end; ++i)
      if (i->second > start)
        overlapping.push_back(*i);
    if (overlapping.empty() && cleanup_time(end) <= watermark_) {
      drop_late(in, r); // a session of its own, gone already
      if (mine.empty())
        sessions_.erase(key);
      return;
    }
    aggregate merged;
    for (auto& [s, e] : overlapping) {
      start = std::min(start, s);
      end = std::max(end, e);
      window_key(key, e, key_);
      keyed_->set_current_key(key_);
      if (auto a = values_->value())
        folder_->merge(merged, *a, key);
      values_->clear();
      starts_of_->clear();
      pending_.erase({e, key_});
      mine.erase(s);
    }
    window_key(key, end, key_);
    keyed_->set_current_key(key_);
    folder_->fold(merged, in, r, false, keys);
    values_->update(merged);
    starts_of_->update(start);
    add_pending(end, key_);
    mine[start] = end;
    if (end - 1 <= watermark_) // fired, within its allowed lateness
      emit(end, key_, out);
  }

  /// Row `r` is late for every window it falls into: it goes to the
  /// "late" side output if an edge takes it (Flink's sideOutputLateData),
  /// else it is dropped and counted (numLateRecordsDropped).
  void drop_late(const row_batch& in, size_t r) {
    if (late_rows_ != nullptr)
      late_rows_->push_row(in, r);
    else
      late_.inc();
  }

  /// Session [?, end) of state key `window_key` is gone.
  void forget_session(const std::string& window_key, int64_t end) {
    auto key = window_key.substr(0, window_key.size() - 8);
    auto i = sessions_.find(key);
    if (i == sessions_.end())
      return;
    for (auto s = i->second.begin(); s != i->second.end(); ++s)
      if (s->second == end) {
        i->second.erase(s);
        break;
      }
    if (i->second.empty())
      sessions_.erase(i);
  }

  /// Appends the window's row: its key, start, end and aggregate so far.
  void emit(int64_t end, const std::string& key, row_batch& out) {
    keyed_->set_current_key(key);
    auto a = values_->value();
    if (!a)
      return;
    int64_t start = 0;
    if (sessions()) {
      auto s = starts_of_->value();
      start = s ? *s : end;
    } else {
      start = end == highest ? highest - spec_.size_ms : end - spec_.size_ms;
    }
    out_keys_.decode(std::string_view{key}.substr(0, key.size() - 8), out);
    auto k = plan_.key.size();
    out.columns[k].push_int(start);
    out.columns[k + 1].push_int(end);
    folder_->emit(*a, out);
    ++out.rows;
    out.push_time(end - 1); // Flink's window.maxTimestamp()
  }

  params params_;
  window_spec spec_;
  aggregation_plan plan_;
  std::optional<aggregate_folder> folder_;
  key_codec keys_;
  key_codec out_keys_;
  state::keyed_backend* keyed_ = nullptr;
  std::unique_ptr<state::keyed_backend> own_;
  std::optional<state::value_state<aggregate>> values_;
  /// Session windows: each session's start (keyed like values_), and each
  /// key's sessions, start → end (rebuilt from that state on a restore).
  std::optional<state::value_state<int64_t>> starts_of_;
  std::map<std::string, std::map<int64_t, int64_t>> sessions_;
  /// Windows with rows, by end: those the watermark passed fire.
  std::set<std::pair<int64_t, std::string>> pending_;
  int64_t watermark_ = lowest;
  counter late_;
  row_batch* late_rows_ = nullptr;
  timer_service* timers_ = nullptr;
  std::unique_ptr<keyed_timers> own_timers_;
  std::vector<int64_t> starts_;
  std::string scratch_;
  std::string key_;
};

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
  f.make_transform = [](const params& p) -> std::unique_ptr<transform> {
    throw_if(check_window(p));
    return std::make_unique<window_transform>(p);
  };
  f.validate = [](const params& p, role) { return check_window(p); };
  // Late rows, as they came, for event-time windows (nothing is late in
  // processing time).
  f.side_outputs = [](const params& p, const schema_query& q) {
    std::map<std::string, schema> out;
    if (q.input != nullptr && !parse_window_spec(p).spec.processing_time)
      out.emplace("late", *q.input);
    return out;
  };
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
