#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "operators/builtin/builtins.hpp"
#include "operators/builtin/index_runs.hpp"
#include "operators/state_codec.hpp"
#include "operators/params.hpp"

namespace weir::ops {

namespace {

__extension__ typedef unsigned __int128 uint128;

// -- sequence -----------------------------------------------------------------

const std::vector<param_spec>& sequence_params() {
  static const std::vector<param_spec> specs{
    {"from", param_kind::integer, true},
    {"to", param_kind::integer, true},
    {"rate", param_kind::non_negative, false},
  };
  return specs;
}

std::string check_sequence(const params& p) {
  auto problem = check_params("sequence", p, sequence_params());
  if (!problem.empty())
    return problem;
  auto from = *parse_int64(p.at("from"));
  auto to = *parse_int64(p.at("to"));
  if (to < from)
    return fmt::format("parameter 'to': {} is less than 'from' ({})", to, from);
  return {};
}

/// The numbers from..to (inclusive); subtask i of n takes the i-th of n
/// contiguous slices, the first (count mod n) slices one number longer
/// (Flink's NumberSequenceIterator::split). Restored at another
/// parallelism, the numbers every old subtask had left are split the same
/// way, so a subtask may hold several ranges.
///
/// With a rate, each subtask emits batches of a twentieth of a second's
/// numbers and pauses for as long as they take at that rate: paced by the
/// subtask's timers, never by reading a clock, so a simulation's virtual
/// time paces it too.
class sequence_source : public source {
public:
  sequence_source(int64_t from, int64_t to, int64_t rate)
    : from_(from), to_(to), rate_(rate) {
    assign_slice(0, 1);
  }

  void open(const operator_context& ctx) override {
    index_ = ctx.subtask_index;
    parallelism_ = ctx.parallelism;
    assign_slice(index_, parallelism_);
  }

  std::chrono::microseconds pause() const override { return pause_; }

  bool next(row_batch& out, size_t max_rows) override {
    auto& values = out.columns[0].ints;
    auto rows_before = out.rows;
    if (rate_ > 0)
      max_rows = std::min<size_t>(
        max_rows, static_cast<size_t>(std::max<int64_t>(rate_ / 20, 1)));
    while (max_rows > 0 && !ranges_.empty()) {
      auto& r = ranges_.front();
      auto n = static_cast<uint64_t>(
        std::min<uint128>(r.remaining, static_cast<uint128>(max_rows)));
      auto first = values.size();
      values.resize(first + n);
      for (uint64_t k = 0; k < n; ++k)
        values[first + k] = static_cast<int64_t>(r.next + k);
      out.rows += n;
      r.next += n;
      r.remaining -= n;
      max_rows -= n;
      if (r.remaining == 0)
        ranges_.erase(ranges_.begin());
    }
    if (rate_ > 0)
      pause_ = std::chrono::microseconds{
        static_cast<int64_t>(out.rows - rows_before) * 1'000'000 / rate_};
    return !ranges_.empty();
  }

  /// One (next, remaining) triple per range left: the format of a single
  /// range is that of snapshots before rescaling.
  std::string snapshot_state() const override {
    state_writer w;
    for (auto& r : ranges_) {
      w.int64(static_cast<int64_t>(r.next));
      w.int64(static_cast<int64_t>(static_cast<uint64_t>(r.remaining >> 64)));
      w.int64(static_cast<int64_t>(static_cast<uint64_t>(r.remaining)));
    }
    if (ranges_.empty()) // exhausted: an empty range, not "no state"
      for (int i = 0; i < 3; ++i)
        w.int64(0);
    return w.take();
  }

  void restore_state(const std::string& bytes) override {
    ranges_ = read_ranges(bytes);
  }

  /// Splits what every old subtask had left into contiguous slices, one
  /// per subtask now, as a fresh start splits from..to.
  void restore_rescaled(const std::vector<std::string>& old_states) override {
    std::vector<range> left;
    uint128 total = 0;
    for (auto& bytes : old_states)
      for (auto& r : read_ranges(bytes)) {
        total += r.remaining;
        left.push_back(r);
      }
    auto n = static_cast<uint128>(std::max<int32_t>(parallelism_, 1));
    auto i = static_cast<uint128>(std::max<int32_t>(index_, 0));
    auto base = total / n;
    auto extra = total % n;
    auto skip = i * base + std::min(i, extra);
    auto take = base + (i < extra ? 1 : 0);
    ranges_.clear();
    for (auto& r : left) {
      if (take == 0)
        break;
      if (skip >= r.remaining) {
        skip -= r.remaining;
        continue;
      }
      auto n_here = std::min<uint128>(r.remaining - skip, take);
      ranges_.push_back({r.next + static_cast<uint64_t>(skip), n_here});
      take -= n_here;
      skip = 0;
    }
  }

private:
  struct range {
    uint64_t next = 0; ///< the next value, as two's complement
    uint128 remaining = 0;
  };

  static std::vector<range> read_ranges(const std::string& bytes) {
    state_reader r{bytes, "sequence"};
    std::vector<range> out;
    do {
      range x;
      x.next = static_cast<uint64_t>(r.int64());
      auto hi = static_cast<uint64_t>(r.int64());
      auto lo = static_cast<uint64_t>(r.int64());
      x.remaining = (static_cast<uint128>(hi) << 64) | lo;
      if (x.remaining > 0)
        out.push_back(x);
    } while (!r.done());
    return out;
  }

  void assign_slice(int32_t index, int32_t parallelism) {
    auto total = static_cast<uint128>(static_cast<uint64_t>(to_)
                                      - static_cast<uint64_t>(from_))
                 + 1;
    auto n = static_cast<uint128>(std::max<int32_t>(parallelism, 1));
    auto i = static_cast<uint128>(std::max<int32_t>(index, 0));
    auto base = total / n;
    auto extra = total % n;
    auto skip = i * base + std::min(i, extra);
    ranges_.clear();
    if (auto count = base + (i < extra ? 1 : 0); count > 0)
      ranges_.push_back(
        {static_cast<uint64_t>(from_) + static_cast<uint64_t>(skip), count});
  }

  int64_t from_;
  int64_t to_;
  int64_t rate_ = 0; ///< records/s per subtask; 0: as fast as it can
  std::chrono::microseconds pause_{0};
  int32_t index_ = 0;
  int32_t parallelism_ = 1;
  std::vector<range> ranges_;
};

// -- generator ----------------------------------------------------------------

const std::vector<param_spec>& generator_params() {
  static const std::vector<param_spec> specs{
    {"count", param_kind::limit, false},
    {"rate", param_kind::non_negative, false},
    {"keys", param_kind::positive, false},
  };
  return specs;
}

/// Record i (over all subtasks; subtask s of n makes i = s, s+n, ...) has key
/// "key-<i mod keys>", value i and the current time as timestamp. With a
/// rate, each subtask makes at most `rate` records per second, the first one
/// at once; it never sleeps but reports the wait through pause().
class generator_source : public source {
public:
  generator_source(int64_t count, int64_t rate, int64_t keys)
    : count_(count), rate_(rate), keys_(keys) {
  }

  void open(const operator_context& ctx) override {
    stride_ = std::max<int32_t>(ctx.parallelism, 1);
    index_ = std::max<int32_t>(ctx.subtask_index, 0);
    runs_ = {{index_, stride_}};
  }

  bool next(row_batch& out, size_t max_rows) override {
    if (exhausted())
      return false;
    auto n = static_cast<uint64_t>(max_rows);
    if (count_ >= 0)
      n = std::min<uint64_t>(n, left());
    if (rate_ > 0)
      n = std::min<uint64_t>(n, rate_budget());
    produce(out, n);
    if (rate_ > 0)
      update_pause();
    return !exhausted();
  }

  std::chrono::microseconds pause() const override { return pause_; }

  /// The next index of the one run of a fresh start (the format from
  /// before rescaling), or (next, stride) of each run.
  std::string snapshot_state() const override {
    return write_runs(runs_, stride_);
  }

  /// Continues after the last record of the checkpoint; the rate limit
  /// starts over from now.
  void restore_state(const std::string& bytes) override {
    runs_ = read_runs(bytes, stride_, "generator");
  }

  /// The old subtasks' runs, dealt over the subtasks now (index_runs.hpp).
  void restore_rescaled(const std::vector<std::string>& old_states) override {
    runs_ = deal_runs(old_states, index_, stride_, count_, "generator");
  }

private:
  using clock = std::chrono::steady_clock;
  using run = index_run;

  bool exhausted() const {
    if (count_ < 0)
      return runs_.empty();
    for (auto& r : runs_)
      if (r.next < count_)
        return false;
    return true;
  }

  /// Records still to make (bounded generators).
  uint64_t left() const {
    uint64_t n = 0;
    for (auto& r : runs_)
      if (r.next < count_)
        n += static_cast<uint64_t>((count_ - r.next + r.stride - 1) / r.stride);
    return n;
  }

  int64_t elapsed_us() const {
    return std::chrono::duration_cast<std::chrono::microseconds>(clock::now()
                                                                 - start_)
      .count();
  }

  /// How many records the elapsed time allows now.
  uint64_t rate_budget() {
    if (!started_) {
      started_ = true;
      start_ = clock::now();
    }
    auto due = static_cast<uint128>(elapsed_us()) * static_cast<uint64_t>(rate_)
                 / 1000000
               + 1;
    return due > produced_ ? static_cast<uint64_t>(due - produced_) : 0;
  }

  /// The time until the next record is due (zero when it is due already).
  void update_pause() {
    auto due_us = (static_cast<uint128>(produced_) * 1000000
                   + static_cast<uint64_t>(rate_) - 1)
                  / static_cast<uint64_t>(rate_);
    auto now_us = static_cast<uint128>(elapsed_us());
    pause_ = std::chrono::microseconds{
      due_us > now_us ? static_cast<int64_t>(due_us - now_us) : 0};
  }

  void produce(row_batch& out, uint64_t n) {
    auto ts = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::system_clock::now().time_since_epoch())
                .count();
    out.reserve(out.rows + n);
    char key[32] = "key-";
    auto& keys = out.columns[0];
    auto& values = out.columns[1];
    // Round-robin over the runs (a rescaled subtask may have several), so
    // that unbounded runs all advance.
    for (uint64_t k = 0; k < n && !runs_.empty(); ++k) {
      cursor_ %= runs_.size();
      auto& r = runs_[cursor_];
      if (count_ >= 0 && r.next >= count_) {
        runs_.erase(runs_.begin() + static_cast<std::ptrdiff_t>(cursor_));
        --k;
        continue;
      }
      auto i = r.next;
      auto end = std::to_chars(key + 4, key + sizeof(key), i % keys_).ptr;
      keys.push_str({key, static_cast<size_t>(end - key)});
      values.push_int(i);
      ++out.rows;
      out.push_time(ts);
      r.next += r.stride;
      ++cursor_;
    }
    produced_ += n;
  }

  int64_t count_; ///< -1: unbounded
  int64_t rate_;  ///< records per second, 0: unlimited
  int64_t keys_;
  int64_t index_ = 0;
  int64_t stride_ = 1; ///< the parallelism
  std::vector<run> runs_{{0, 1}};
  size_t cursor_ = 0;
  uint64_t produced_ = 0;
  bool started_ = false;
  clock::time_point start_;
  std::chrono::microseconds pause_{0};
};

} // namespace

operator_factory sequence_factory() {
  operator_factory f;
  f.name = "sequence";
  f.splits_operator_state = true;
  f.make_source = [](const params& p) -> std::unique_ptr<source> {
    throw_if(check_sequence(p));
    return std::make_unique<sequence_source>(*parse_int64(p.at("from")),
                                             *parse_int64(p.at("to")),
                                             int_param(p, "rate", 0));
  };
  f.validate = [](const params& p, role) { return check_sequence(p); };
  f.bounded = [](const params&) { return true; };
  f.output_schema = [](const params&, const schema_query&) {
    return derived_schema{default_schema::numbers(), {}};
  };
  return f;
}

operator_factory generator_factory() {
  operator_factory f;
  f.name = "generator";
  f.splits_operator_state = true;
  f.make_source = [](const params& p) -> std::unique_ptr<source> {
    throw_if(check_params("generator", p, generator_params()));
    return std::make_unique<generator_source>(int_param(p, "count", -1),
                                              int_param(p, "rate", 0),
                                              int_param(p, "keys", 10));
  };
  f.validate = [](const params& p, role) {
    return check_params("generator", p, generator_params());
  };
  f.output_schema = [](const params&, const schema_query&) {
    return derived_schema{default_schema::keyed_numbers(), {}};
  };
  f.bounded = [](const params& p) {
    auto i = p.find("count");
    if (i == p.end())
      return false;
    auto n = parse_int64(i->second);
    return n && *n >= 0;
  };
  return f;
}

} // namespace weir::ops
