#pragma once

// Building a job in C++ (docs/cpp-api.md), in the spirit of Flink's
// DataStream API:
//
//   weir::job_builder job{"word count"};
//   job.parallelism(2);
//   job.read_text_file("input.txt")
//     .flat_map("tokenize").name("words")
//     .key_by()
//     .count().name("counts")
//     .collect();
//   weir::job_definition def = job.build();
//
// A built job is a JSON job spec (the format of `weir run SPEC`), so a job
// built here and one written by hand go through one code path from there
// on: the same checks, the same JobGraph, the same `weir info` plan.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "api/user_function.hpp"
#include "operators/driver.hpp"
#include "operators/operator.hpp"
#include "operators/registry.hpp"
#include "operators/window_function.hpp"

namespace weir {

using plugin::job_definition;

class job_builder;
class windowed_stream;
class connected_streams;

/// Which windows a keyed stream's rows fall into (Flink's
/// TumblingEventTimeWindows, SlidingEventTimeWindows and
/// EventTimeSessionWindows; docs/event-time.md § Windows): event time, in
/// milliseconds.
struct window_assigner {
  static window_assigner tumbling(std::chrono::milliseconds size,
                                  std::chrono::milliseconds offset = {});
  static window_assigner sliding(std::chrono::milliseconds size,
                                 std::chrono::milliseconds slide,
                                 std::chrono::milliseconds offset = {});
  /// A key's rows less than `gap` apart are one session
  /// (EventTimeSessionWindows.withGap).
  static window_assigner session(std::chrono::milliseconds gap);
  /// The window operator's parameters (type, size, slide, offset).
  ops::params params;
};

namespace detail {
struct job_plan;

/// What a map lambda returns when its output schema is derived from its
/// type: a value (an integer or a string) or a (key, value) pair.
template <class R, class = void>
struct typed_value : std::false_type {};

template <class I>
struct typed_value<I, std::enable_if_t<std::is_integral_v<I>
                                       && !std::is_same_v<I, bool>>>
  : std::true_type {
  static schema output() { return default_schema::numbers(); }
  static record make(I v) { return record::integer({}, static_cast<int64_t>(v)); }
};

template <>
struct typed_value<std::string> : std::true_type {
  static schema output() { return default_schema::lines(); }
  static record make(std::string v) { return record::string({}, std::move(v)); }
};

template <class I>
struct typed_value<std::pair<std::string, I>,
                   std::enable_if_t<std::is_integral_v<I>
                                    && !std::is_same_v<I, bool>>>
  : std::true_type {
  static schema output() { return default_schema::keyed_numbers(); }
  static record make(std::pair<std::string, I> kv) {
    return record::integer(std::move(kv.first),
                           static_cast<int64_t>(kv.second));
  }
};

template <>
struct typed_value<std::pair<std::string, std::string>> : std::true_type {
  static schema output() { return default_schema::keyed_lines(); }
  static record make(std::pair<std::string, std::string> kv) {
    return record::string(std::move(kv.first), std::move(kv.second));
  }
};

/// How a step reads another: its step index, partitioning ("": the
/// default), key fields and side output ("": the main one).
struct input_edge {
  size_t from = 0;
  std::string partitioning;
  std::vector<std::string> key;
  std::string output;
};
} // namespace detail

/// The output of one step of a job: the next step reads it. Steps get the
/// operator's name as their id ("map", "count"; "map_2" for a second one)
/// unless name() gives one; ids are what savepoints map state by, so give
/// stateful steps a name that stays.
class stream {
public:
  // -- how the next step reads this one (default: forward when both have
  //    the same parallelism, else rebalance, as in a JSON spec) ---------

  /// By key: every row of one key reaches the same subtask. No fields: the
  /// planner's default key (a `key` field, as an edge "hash" without
  /// "key").
  stream key_by(std::vector<std::string> fields = {}) const;
  stream key_by(std::string field) const;
  /// By the key `selector` computes from each record (Flink's
  /// keyBy(KeySelector)): a step sets each record's key, then rows go by
  /// it. In-process, like a lambda; the input is records (docs/rows.md §
  /// Compatibility).
  stream key_by(std::function<std::string(const record&)> selector) const;
  stream rebalance() const;
  stream broadcast() const;
  stream forward() const;
  /// The rows of this step's side output `name` instead of its main ones
  /// (Flink's getSideOutput; a window's "late" rows): the next step reads
  /// those. Combine with key_by() and the like after it.
  stream side_output(std::string name) const;

  /// The rows of this stream and of `others` as one stream (Flink's
  /// union): the next step reads all of them; their schemas must be the
  /// same (checked at submission, naming both). A union is no step:
  /// name(), parallelism() and watermarks() on it throw
  /// std::logic_error. Streams of another job: std::invalid_argument.
  stream union_with(const stream& other) const;
  /// This stream and `other`, each read by its own function of one
  /// co-map or co-flat-map step (Flink's connect + CoMapFunction).
  connected_streams connect(const stream& other) const;

  // -- transforms ---------------------------------------------------------

  /// Record functions of this program (lambdas): an embedded cluster runs
  /// them as they are; a cluster in another process cannot (the job is
  /// refused when it is submitted there: use WEIR_MAP and friends).
  /// `output`: the schema they emit (default: their input's).
  stream map(std::function<record(record&&)> f,
             std::optional<schema> output = std::nullopt) const;
  stream flat_map(std::function<void(record&&, std::vector<record>&)> f,
                  std::optional<schema> output = std::nullopt) const;
  stream filter(std::function<bool(const record&)> f) const;
  /// A map lambda whose output schema is derived from what it returns, so
  /// a mismatch is a compile error, not a failure at run time: an integer
  /// → (value: int64), a std::string → (value: string), a
  /// std::pair<std::string, integer or std::string> → (key, value).
  /// Records keep their event time. In-process, like any lambda.
  template <class F,
            class R = std::decay_t<std::invoke_result_t<F&, record&&>>,
            std::enable_if_t<detail::typed_value<R>::value, int> = 0>
  stream map(F f) const {
    return map(
      [f](record&& r) mutable {
        auto time = r.timestamp;
        auto out = detail::typed_value<R>::make(f(std::move(r)));
        out.timestamp = time;
        return out;
      },
      detail::typed_value<R>::output());
  }

  /// Functions defined with WEIR_MAP, WEIR_FLAT_MAP, WEIR_FILTER: they
  /// travel by name to the workers that load their library. One of
  /// another kind (a filter function given to map()) throws
  /// std::invalid_argument naming the right call.
  stream map(const user_function& f) const;
  stream flat_map(const user_function& f) const;
  stream filter(const user_function& f) const;

  /// Built-in functions by name, with their parameters (docs/rows.md):
  /// map("key_mod", {{"modulus", "10"}}), flat_map("tokenize").
  stream map(const std::string& function, ops::params p = {}) const;
  stream flat_map(const std::string& function, ops::params p = {}) const;
  stream filter(const std::string& function, ops::params p = {}) const;

  /// Expressions on fields: where("bytes > 1000"), select("key, value * 2
  /// as value"), project({"key", "bytes"}).
  stream where(std::string condition) const;
  stream select(std::string expressions) const;
  stream project(const std::vector<std::string>& fields) const;

  /// Keyed aggregations (after key_by): one row per key.
  stream count(std::string as = {}) const;
  /// Flink's rolling reduce (after key_by): each record folded into its
  /// key's last result by `f` (the earlier first), which is emitted;
  /// kept in keyed state (checkpoints, savepoints). In-process.
  stream reduce(std::function<record(record&&, record&&)> f) const;
  stream sum(std::string field, std::string as = {}) const;
  stream min(std::string field, std::string as = {}) const;
  stream max(std::string field, std::string as = {}) const;
  stream avg(std::string field, std::string as = {}) const;

  // -- event time (docs/event-time.md) --------------------------------------

  /// This step's rows take their event time from `field` (int64 ms or a
  /// timestamp) and its watermark trails the largest by
  /// `max_out_of_orderness` (Flink's forBoundedOutOfOrderness); with an
  /// `idle_timeout` (0: never) a subtask that emits nothing that long is
  /// left out of its consumers' watermark until it emits again.
  stream watermarks(std::string field,
                    std::chrono::milliseconds max_out_of_orderness,
                    std::chrono::milliseconds idle_timeout = {}) const;
  /// As above, for timestamps that never go back (forMonotonousTimestamps).
  stream monotonous_watermarks(std::string field,
                               std::chrono::milliseconds idle_timeout = {}) const;
  /// Windows of a keyed stream (after key_by); an aggregation follows:
  /// key_by("user").window(window_assigner::tumbling(1min)).count().
  windowed_stream window(const window_assigner& w) const;
  /// This keyed stream's rows joined with those of `other` (keyed by
  /// fields of the same types) whose key is equal and whose event time is
  /// from `lower` to `upper` after theirs (Flink's
  /// intervalJoin(other).between(lower, upper)): each pair emits this
  /// stream's fields, then `other`'s that are not its key. Both streams
  /// are of this job; throws std::invalid_argument otherwise.
  stream interval_join(const stream& other, std::chrono::milliseconds lower,
                       std::chrono::milliseconds upper) const;

  /// Any transform by operator name: a built-in one or a library's.
  stream apply(const std::string& op, ops::params p = {}) const;

  /// A transform of this program given as a factory (a user operator class:
  /// see transform<T>); in-process like a lambda.
  stream apply(ops::operator_factory f) const;

  /// A user operator class T (an ops::transform) built with `args` in each
  /// subtask; in-process like a lambda.
  template <class T, class... Args>
  stream transform(std::string label, Args... args) const {
    ops::operator_factory f;
    f.name = std::move(label);
    f.make_transform = [args...](const ops::params&) {
      return std::unique_ptr<ops::transform>(new T(args...));
    };
    return apply(std::move(f));
  }

  // -- sinks (a sink is a step too: name() and parallelism() apply) --------

  /// Rows handed back with the job's result (job_result::table, by this
  /// step's name).
  stream collect() const;
  /// Rows printed on the worker's standard output.
  stream print() const;
  stream discard() const;
  /// `format`: "tsv" (default) or "csv"; `exactly_once`: published on
  /// completed checkpoints.
  stream write_text_file(std::string path, std::string format = {},
                         bool exactly_once = false) const;
  /// Any sink by operator name.
  stream to(const std::string& op, ops::params p = {}) const;
  /// A sink of this program given as a factory; in-process like a lambda.
  stream to(ops::operator_factory f) const;

  // -- this step ------------------------------------------------------------

  /// Its id (a vertex id of the JobGraph).
  stream name(std::string id) const;
  /// Its parallelism (default: the job's).
  stream parallelism(int32_t p) const;
  /// Its id as it stands.
  const std::string& id() const;

private:
  friend class job_builder;
  friend class windowed_stream;
  friend class connected_streams;
  stream(std::shared_ptr<detail::job_plan> plan, size_t step)
    : plan_(std::move(plan)), ends_{detail::input_edge{step, {}, {}, {}}} {}

  stream then(std::string op, ops::params p, std::string label = {}) const;
  stream then_in_process(ops::operator_factory f, std::string what) const;
  stream with_partitioning(std::string part,
                           std::vector<std::string> key = {}) const;
  /// The one step this stream is (a union is none: throws `call` named).
  size_t step(const char* call) const;
  /// Throws std::invalid_argument (naming `call`) when `other` is of
  /// another job.
  void same_job(const stream& other, const char* call) const;

  std::shared_ptr<detail::job_plan> plan_;
  /// What the next step reads: one step's output, or several (a union).
  std::vector<detail::input_edge> ends_;
};

/// Two streams connected (stream::connect): one step reads both, each
/// with its own function.
class connected_streams {
public:
  /// Each record of the first stream becomes `first(record)`, each of the
  /// second `second(record)` (CoMapFunction). `output`: the schema both
  /// emit (default: the first stream's). In-process.
  stream map(std::function<record(record&&)> first,
             std::function<record(record&&)> second,
             std::optional<schema> output = std::nullopt) const;
  /// Any number of records each (CoFlatMapFunction).
  stream flat_map(std::function<void(record&&, std::vector<record>&)> first,
                  std::function<void(record&&, std::vector<record>&)> second,
                  std::optional<schema> output = std::nullopt) const;

private:
  friend class stream;
  connected_streams(stream first, stream second)
    : first_(std::move(first)), second_(std::move(second)) {}
  stream first_;
  stream second_;
};

/// A keyed stream cut into windows: each aggregation is one `window` step
/// that emits the key fields, window_start, window_end and the aggregate
/// once the watermark passes a window's end.
class windowed_stream {
public:
  /// Late rows within this much of a fired window's end still count, each
  /// firing it again (Flink's allowedLateness; default 0).
  windowed_stream allowed_lateness(std::chrono::milliseconds d) const;

  stream count(std::string as = {}) const;
  stream sum(std::string field, std::string as = {}) const;
  stream min(std::string field, std::string as = {}) const;
  stream max(std::string field, std::string as = {}) const;
  stream avg(std::string field, std::string as = {}) const;
  /// Each window aggregated by a function of this program (Flink's
  /// AggregateFunction; ops::window_aggregate_function): rows of the key
  /// fields, window_start, window_end and `value`. In-process, like a
  /// lambda.
  stream aggregate(ops::window_aggregate_function f) const;
  /// Each window's records folded pairwise by `f` (Flink's reduce): its
  /// `value` is the last record's.
  stream reduce(std::function<record(record&&, record&&)> f) const;

private:
  friend class stream;
  windowed_stream(stream input, ops::params p)
    : input_(std::move(input)), params_(std::move(p)) {}
  stream aggregate(std::string kind, std::string field, std::string as) const;

  stream input_;
  ops::params params_;
};

/// A job under construction. Copies share it.
class job_builder {
public:
  explicit job_builder(std::string name);

  /// The default parallelism of steps without their own (`-p`).
  job_builder& parallelism(int32_t p);
  /// A configuration key of the job ("config" in a spec), e.g.
  /// restart-strategy.type.
  job_builder& config(std::string key, std::string value);

  /// Sources.
  stream source(const std::string& op, ops::params p = {});
  stream read_text_file(std::string path);
  /// The integers from..to (inclusive), split over the subtasks.
  stream sequence(int64_t from, int64_t to);
  /// These records (Flink's fromElements), carried in the job's spec (the
  /// `elements` source): all of one kind, keyed or not, int64 or string
  /// values; else std::invalid_argument naming the first that differs.
  stream from_elements(const std::vector<record>& records);
  stream from_elements(const std::vector<int64_t>& values);
  stream from_elements(const std::vector<std::string>& values);
  /// A source of this program given as a factory; in-process like a lambda.
  stream source(ops::operator_factory f);

  /// The job, ready to submit (what its operators make of their
  /// parameters and inputs is checked then, like a spec's). Throws
  /// std::invalid_argument naming the step when two steps share an id.
  job_definition build() const;

private:
  std::shared_ptr<detail::job_plan> plan_;
};

} // namespace weir
