#pragma once

// The window operator's logic over what a window accumulates (windows.cpp
// for the built-in aggregations, window_functions.cpp for a user's
// function); internal to operators/builtin.

#include <algorithm>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "operators/builtin/windows.hpp"
#include "operators/key_codec.hpp"
#include "operators/keyed_timers.hpp"
#include "operators/params.hpp"
#include "storage/state/codec.hpp"
#include "storage/state/heap_backend.hpp"
#include "storage/state/value_state.hpp"

namespace weir::ops::windowing {

constexpr int64_t window_lowest = std::numeric_limits<int64_t>::min();
constexpr int64_t window_highest = std::numeric_limits<int64_t>::max();

/// A key and a window's end in one state key: the key's bytes, then the
/// end as 8 bytes that sort as the signed number does.
inline void window_key(std::string_view key, int64_t end, std::string& out) {
  out.assign(key.data(), key.size());
  state::codec<int64_t>::append(out, end);
}

/// The end of the window of a state key (what window_key made); a key too
/// short to be one fails the subtask (state from elsewhere).
inline int64_t end_of(std::string_view window_key) {
  if (window_key.size() < 8)
    throw operator_error("a window's keyed state holds a key of fewer than "
                         "8 bytes");
  return state::codec<int64_t>::decode(window_key.substr(window_key.size() - 8));
}

/// Keyed windows with an incremental aggregate per key and window, in keyed
/// state (the heap or RocksDB); the windows waiting to fire are indexed
/// by their end, rebuilt from that state when it is restored.
/// `Accumulation` is what a window keeps and emits: the built-in
/// aggregations (windows.cpp) or a user's function (window_functions.cpp),
/// with `value` its accumulator type and plan(), state_name(), initial(),
/// fold(), merge() and emit() (appends the fields after window_end).
template <class Accumulation>
class window_transform : public transform {
public:
  window_transform(params p, Accumulation acc)
    : params_(std::move(p)), acc_(std::move(acc)) {}
  using value = typename Accumulation::value;

  bool uses_keyed_state() const override { return true; }

  void open(const operator_context& ctx) override {
    if (ctx.input == nullptr)
      throw operator_error("a window needs an input");
    auto parsed = parse_window_spec(params_);
    throw_if(parsed.problem);
    spec_ = parsed.spec;
    acc_.plan(*ctx.input, ctx.key);
    key_count_ = ctx.key.size();
    keys_ = key_codec(*ctx.input, ctx.key);
    std::vector<size_t> leading(ctx.key.size());
    for (size_t i = 0; i < leading.size(); ++i)
      leading[i] = i;
    out_keys_ = key_codec(acc_.output(), leading);
    keyed_ = ctx.keyed_state;
    if (keyed_ == nullptr) { // used outside a subtask (tests, tools)
      own_ = std::make_unique<state::heap_backend>();
      keyed_ = own_.get();
    }
    values_.emplace(*keyed_, acc_.state_name());
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
    values_->for_each([&](std::string_view k, const value&) {
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
      // The clock when the batch arrived is each row's time here, past the
      // windows already fired: in the millisecond a window fired, a row
      // belongs to the next one (nothing is late in processing time).
      auto now = std::max(timers_->current_processing_time(),
                          watermark_ < window_highest ? watermark_ + 1
                                                      : watermark_);
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
        values_->modify([&](value& a, bool fresh) {
          if (fresh)
            a = acc_.initial();
          acc_.fold(a, in, r, partial, keys);
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

  void finish(row_batch& out) override { advance(window_highest, out); }

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

  /// At another parallelism: the lowest of the old subtasks' watermarks
  /// (each new subtask holds keys of several of them, and none of their
  /// rows may be taken for late).
  void restore_rescaled(const std::vector<std::string>& old_states) override {
    bool any = false;
    for (auto& bytes : old_states) {
      if (bytes.empty())
        continue;
      auto before = watermark_;
      restore_state(bytes);
      if (any)
        watermark_ = std::min(watermark_, before);
      any = true;
    }
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
      keyed_->set_current_key({}); // the key's string goes with the erase
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
    return start > window_highest - spec_.size_ms ? window_highest : start + spec_.size_ms;
  }

  /// When the window's state goes: once the watermark passed its end by
  /// the allowed lateness (saturating at the highest event time).
  int64_t cleanup_time(int64_t end) const {
    auto last = end - 1;
    return last > window_highest - spec_.allowed_lateness_ms
             ? window_highest
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
    auto end = t > window_highest - spec_.gap_ms ? window_highest : t + spec_.gap_ms;
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
    auto merged = acc_.initial();
    for (auto& [s, e] : overlapping) {
      start = std::min(start, s);
      end = std::max(end, e);
      window_key(key, e, key_);
      keyed_->set_current_key(key_);
      if (auto a = values_->value())
        acc_.merge(merged, *a, key);
      values_->clear();
      starts_of_->clear();
      pending_.erase({e, key_});
      mine.erase(s);
    }
    window_key(key, end, key_);
    keyed_->set_current_key(key_);
    acc_.fold(merged, in, r, false, keys);
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
      start = end == window_highest ? window_highest - spec_.size_ms : end - spec_.size_ms;
    }
    out_keys_.decode(std::string_view{key}.substr(0, key.size() - 8), out);
    out.columns[key_count_].push_int(start);
    out.columns[key_count_ + 1].push_int(end);
    acc_.emit(*a, out, key_count_ + 2);
    ++out.rows;
    out.push_time(end - 1); // Flink's window.maxTimestamp()
  }

  params params_;
  Accumulation acc_;
  size_t key_count_ = 0;
  window_spec spec_;
  key_codec keys_;
  key_codec out_keys_;
  state::keyed_backend* keyed_ = nullptr;
  std::unique_ptr<state::keyed_backend> own_;
  std::optional<state::value_state<value>> values_;
  /// Session windows: each session's start (keyed like values_), and each
  /// key's sessions, start → end (rebuilt from that state on a restore).
  std::optional<state::value_state<int64_t>> starts_of_;
  std::map<std::string, std::map<int64_t, int64_t>> sessions_;
  /// Windows with rows, by end: those the watermark passed fire.
  std::set<std::pair<int64_t, std::string>> pending_;
  int64_t watermark_ = window_lowest;
  counter late_;
  row_batch* late_rows_ = nullptr;
  timer_service* timers_ = nullptr;
  std::unique_ptr<keyed_timers> own_timers_;
  std::vector<int64_t> starts_;
  std::string scratch_;
  std::string key_;
};


} // namespace weir::ops::windowing
