#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "operators/builtin/builtins.hpp"
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
/// (Flink's NumberSequenceIterator::split).
class sequence_source : public source {
public:
  sequence_source(int64_t from, int64_t to) : from_(from), to_(to) {
    assign_slice(0, 1);
  }

  void open(const operator_context& ctx) override {
    assign_slice(ctx.subtask_index, ctx.parallelism);
  }

  bool next(row_batch& out, size_t max_rows) override {
    auto n = static_cast<uint64_t>(
      std::min<uint128>(remaining_, static_cast<uint128>(max_rows)));
    auto& values = out.columns[0].ints;
    auto first = values.size();
    values.resize(first + n);
    for (uint64_t k = 0; k < n; ++k)
      values[first + k] = static_cast<int64_t>(next_ + k);
    out.rows += n;
    next_ += n;
    remaining_ -= n;
    return remaining_ > 0;
  }

  std::string snapshot_state() const override {
    state_writer w;
    w.int64(static_cast<int64_t>(next_));
    w.int64(static_cast<int64_t>(static_cast<uint64_t>(remaining_ >> 64)));
    w.int64(static_cast<int64_t>(static_cast<uint64_t>(remaining_)));
    return w.take();
  }

  void restore_state(const std::string& bytes) override {
    state_reader r{bytes, "sequence"};
    next_ = static_cast<uint64_t>(r.int64());
    auto hi = static_cast<uint64_t>(r.int64());
    auto lo = static_cast<uint64_t>(r.int64());
    remaining_ = (static_cast<uint128>(hi) << 64) | lo;
  }

private:
  void assign_slice(int32_t index, int32_t parallelism) {
    auto total = static_cast<uint128>(static_cast<uint64_t>(to_)
                                      - static_cast<uint64_t>(from_))
                 + 1;
    auto n = static_cast<uint128>(std::max<int32_t>(parallelism, 1));
    auto i = static_cast<uint128>(std::max<int32_t>(index, 0));
    auto base = total / n;
    auto extra = total % n;
    auto skip = i * base + std::min(i, extra);
    next_ = static_cast<uint64_t>(from_) + static_cast<uint64_t>(skip);
    remaining_ = base + (i < extra ? 1 : 0);
  }

  int64_t from_;
  int64_t to_;
  uint64_t next_ = 0;   ///< the next value, as two's complement
  uint128 remaining_ = 0;
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
    next_index_ = std::max<int32_t>(ctx.subtask_index, 0);
    stride_ = std::max<int32_t>(ctx.parallelism, 1);
  }

  bool next(row_batch& out, size_t max_rows) override {
    if (exhausted())
      return false;
    auto n = static_cast<uint64_t>(max_rows);
    if (count_ >= 0)
      n = std::min<uint64_t>(n, (count_ - next_index_ + stride_ - 1) / stride_);
    if (rate_ > 0)
      n = std::min<uint64_t>(n, rate_budget());
    produce(out, n);
    if (rate_ > 0)
      update_pause();
    return !exhausted();
  }

  std::chrono::microseconds pause() const override { return pause_; }

  std::string snapshot_state() const override {
    state_writer w;
    w.int64(next_index_);
    return w.take();
  }

  /// Continues after the last record of the checkpoint; the rate limit
  /// starts over from now.
  void restore_state(const std::string& bytes) override {
    state_reader r{bytes, "generator"};
    next_index_ = r.int64();
  }

private:
  using clock = std::chrono::steady_clock;

  bool exhausted() const { return count_ >= 0 && next_index_ >= count_; }

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
    for (uint64_t k = 0; k < n; ++k) {
      auto i = next_index_;
      auto end = std::to_chars(key + 4, key + sizeof(key), i % keys_).ptr;
      keys.push_str({key, static_cast<size_t>(end - key)});
      values.push_int(i);
      ++out.rows;
      out.push_time(ts);
      next_index_ += stride_;
    }
    produced_ += n;
  }

  int64_t count_; ///< -1: unbounded
  int64_t rate_;  ///< records per second, 0: unlimited
  int64_t keys_;
  int64_t next_index_ = 0;
  int64_t stride_ = 1;
  uint64_t produced_ = 0;
  bool started_ = false;
  clock::time_point start_;
  std::chrono::microseconds pause_{0};
};

} // namespace

operator_factory sequence_factory() {
  operator_factory f;
  f.name = "sequence";
  f.make_source = [](const params& p) -> std::unique_ptr<source> {
    throw_if(check_sequence(p));
    return std::make_unique<sequence_source>(*parse_int64(p.at("from")),
                                             *parse_int64(p.at("to")));
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
