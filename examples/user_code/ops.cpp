// An example user library: operators a job spec names like built-in ones,
// once the library is shipped with `--libjars`.
//
//   weir run examples/user_code/upper.json
//     --libjars build/examples/user_code/libweir_example_ops.so
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "operators/plugin.hpp"
#include "operators/row_access.hpp"
#include "storage/state/value_state.hpp"

namespace {

using weir::record;
namespace ops = weir::ops;
using weir::plugin::args;
using weir::plugin::param;

/// `inline_text` (source): the lines of parameter `text`, split over the
/// subtasks round-robin; for small inputs that travel with the job.
class inline_text : public ops::source {
public:
  explicit inline_text(std::string text) : text_(std::move(text)) {}

  void open(const ops::operator_context& ctx) override {
    std::istringstream in{text_};
    std::string line;
    for (int64_t i = 0; std::getline(in, line); ++i)
      if (i % ctx.parallelism == ctx.subtask_index)
        lines_.push_back(line);
  }

  /// `out` has the columns of (value: string), the schema the factory
  /// declares: one string column.
  bool next(weir::row_batch& out, size_t max_rows) override {
    auto& values = out.columns[0];
    while (next_ < lines_.size() && max_rows-- > 0) {
      values.push_str(lines_[next_++]);
      ++out.rows;
    }
    return next_ < lines_.size();
  }

private:
  std::string text_;
  std::vector<std::string> lines_;
  size_t next_ = 0;
};

/// `top_n` (transform, parameter `n`, default 10): at the end of its input,
/// the n records with the largest value (ties by key), largest first. It
/// works on records (ops::record_transform): rows of (key: string, value:
/// int64).
class top_n : public ops::record_transform {
public:
  explicit top_n(size_t n) : n_(n) {}

protected:
  void apply(std::vector<record>& in, std::vector<record>&, bool) override {
    for (auto& r : in)
      kept_.push_back(std::move(r));
    in.clear();
    if (kept_.size() > 4 * n_ + 1024)
      trim();
  }

  void finish_records(std::vector<record>& out) override {
    trim();
    for (auto& r : kept_)
      out.push_back(std::move(r));
  }

private:
  void trim() {
    auto better = [](const record& a, const record& b) {
      return a.num != b.num ? a.num > b.num : a.key < b.key;
    };
    std::sort(kept_.begin(), kept_.end(), better);
    if (kept_.size() > n_)
      kept_.resize(n_);
  }

  size_t n_;
  std::vector<record> kept_;
};

/// `kilobytes` (transform, parameter `field`, an int64 field): every input
/// field, then `<field>_kb`, the field divided by 1024, as a double. An
/// operator on rows: it reads and writes fields through ops::field_ref.
class kilobytes : public ops::transform {
public:
  explicit kilobytes(std::string field) : field_(std::move(field)) {}

  void open(const ops::operator_context& ctx) override {
    in_ = ops::field_ref::of(*ctx.input, field_, weir::field_type::int64);
    out_ = ops::field_ref::of(*ctx.output, field_ + "_kb",
                              weir::field_type::float64);
  }

  void process(weir::row_batch& in, weir::row_batch& out, bool) override {
    // The input's fields come first in the output: copy them a column at
    // a time, then compute the new one.
    for (size_t c = 0; c < in.columns.size(); ++c)
      out.columns[c].append(in.columns[c]);
    for (size_t i = 0; i < in.rows; ++i) {
      if (in_.is_null(in, i))
        out_.set_null(out);
      else
        out_.set(out, static_cast<double>(in_.int64(in, i)) / 1024.0);
    }
    out.times.insert(out.times.end(), in.times.begin(), in.times.end());
    out.rows += in.rows;
  }

  /// The output schema: the input's fields and `<field>_kb: double`.
  static ops::derived_schema output(const ops::params& p,
                                    const ops::schema_query& q) {
    auto i = p.find("field");
    if (i == p.end())
      return {{}, "parameter 'field': missing"};
    if (q.input == nullptr)
      return {{}, "kilobytes needs an input"};
    auto f = q.input->find(i->second);
    if (!f || q.input->fields[*f].type != weir::field_type::int64)
      return {{}, "parameter 'field': '" + i->second
                    + "' is not an int64 field of " + to_string(*q.input)};
    auto s = *q.input;
    s.fields.push_back(
      {i->second + "_kb", weir::field_type::float64, q.input->fields[*f].nullable});
    return {s, {}};
  }

private:
  std::string field_;
  ops::field_ref in_;
  ops::field_ref out_;
};

// [snippet: running_count class]
/// `running_count` (transform, after a hash edge; parameter `threshold`):
/// counts the records of every key in keyed state, which checkpoints and
/// savepoints keep like the built-in aggregations' state; for every record
/// whose key has then been seen `threshold` times or more, emits the key
/// and its count.
class running_count : public ops::record_transform {
public:
  explicit running_count(int64_t threshold) : threshold_(threshold) {}

  /// Asks the runtime for a keyed state backend (ctx.keyed_state).
  bool uses_keyed_state() const override { return true; }

protected:
  void open_records(const ops::operator_context& ctx) override {
    state_ = ctx.keyed_state;
    counts_.emplace(*state_, "count"); // restored before open, if any
  }

  void apply(std::vector<record>& in, std::vector<record>& out,
             bool) override {
    for (auto& r : in) {
      state_->set_current_key(r.key); // counts_ now acts on r.key
      int64_t n = counts_->value().value_or(0) + 1;
      counts_->update(n);
      if (n >= threshold_)
        out.push_back(record::integer(r.key, n));
    }
    in.clear();
  }

private:
  int64_t threshold_;
  weir::state::keyed_backend* state_ = nullptr;
  std::optional<weir::state::value_state<int64_t>> counts_;
};
// [end snippet]

// [snippet: count_with_timeout class]
/// `count_with_timeout` (transform, after a hash edge; parameter
/// `timeout_ms`): Flink's KeyedProcessFunction example. Counts each key's
/// records and emits (key, count) once the key has had no record for
/// `timeout_ms` of event time. Each record moves its key's event-time
/// timer to its own time plus the timeout; the timer fires once the
/// watermark passes it (or at the end of the input) and the key's count
/// starts again from zero.
class count_with_timeout : public ops::record_transform {
public:
  explicit count_with_timeout(int64_t timeout) : timeout_(timeout) {}

  /// Timers come with keyed state (ctx.timers).
  bool uses_keyed_state() const override { return true; }

protected:
  void open_records(const ops::operator_context& ctx) override {
    state_ = ctx.keyed_state;
    timers_ = ctx.timers;
    count_.emplace(*state_, "count");
    last_.emplace(*state_, "last-modified");
  }

  void apply(std::vector<record>& in, std::vector<record>&, bool) override {
    for (auto& r : in) {
      state_->set_current_key(r.key); // state and timers act on r.key
      count_->update(count_->value().value_or(0) + 1);
      if (auto last = last_->value())
        timers_->delete_event_time_timer(*last + timeout_);
      last_->update(r.timestamp);
      timers_->register_event_time_timer(r.timestamp + timeout_);
    }
  }

  void on_timer_records(int64_t time, ops::time_domain,
                        std::vector<record>& out) override {
    // The timer's key is current again.
    auto n = count_->value();
    if (!n)
      return;
    out.push_back(record::integer(std::string{state_->current_key()}, *n, time));
    count_->clear();
    last_->clear();
  }

private:
  int64_t timeout_;
  weir::state::keyed_backend* state_ = nullptr;
  ops::timer_service* timers_ = nullptr;
  std::optional<weir::state::value_state<int64_t>> count_;
  std::optional<weir::state::value_state<int64_t>> last_;
};
// [end snippet]

// [snippet: distinct_values]
/// `distinct_values` (a window, after a hash edge; the `window` operator's
/// parameters but `aggregate`): how many distinct values each key had in
/// each window, as Flink's AggregateFunction would count them. The
/// accumulator is the values seen, sorted, one per line: keyed state, so
/// that checkpoints and savepoints keep the open windows.
ops::window_aggregate_function distinct_values() {
  auto values_of = [](const std::string& acc) {
    std::set<std::string> seen;
    std::istringstream in{acc};
    for (std::string line; std::getline(in, line);)
      seen.insert(line);
    return seen;
  };
  auto as_text = [](const std::set<std::string>& seen) {
    std::string acc;
    for (auto& v : seen)
      acc += v + "\n";
    return acc;
  };
  ops::window_aggregate_function f;
  f.create = [] { return std::string{}; };
  f.add = [=](std::string& acc, const record& r) {
    auto seen = values_of(acc);
    seen.insert(r.is_text ? r.text : std::to_string(r.num));
    acc = as_text(seen);
  };
  f.merge = [=](std::string& acc, const std::string& other) {
    auto seen = values_of(acc);
    for (auto& v : values_of(other))
      seen.insert(v);
    acc = as_text(seen);
  };
  f.result = [=](const std::string& acc) {
    return record::integer({}, static_cast<int64_t>(values_of(acc).size()));
  };
  f.value_type = weir::field_type::int64;
  return f;
}
// [end snippet]

std::string n_param(const ops::params& p) {
  auto i = p.find("n");
  if (i == p.end())
    return {};
  char* end = nullptr;
  auto n = std::strtol(i->second.c_str(), &end, 10);
  if (*end != '\0' || n < 1)
    return "parameter 'n': '" + i->second + "' is not a positive integer";
  return {};
}

void setup(weir::plugin::registrar& r) {
  // `upper`: the text value in capitals.
  r.add_operator(weir::plugin::map_operator("upper", [](record&& x) {
    for (auto& c : x.text)
      c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    return std::move(x);
  }));
  // `parse_count`: a line "word<TAB>n" (a count's text output) back into a
  // keyed integer record: its output schema is (key: string, value: int64).
  r.add_operator(weir::plugin::map_operator(
    "parse_count",
    [](record&& x) {
      auto tab = x.text.find('\t');
      if (tab == std::string::npos)
        throw ops::operator_error("parse_count: no tab in '" + x.text + "'");
      return record::integer(x.text.substr(0, tab),
                             std::atoll(x.text.c_str() + tab + 1));
    },
    weir::default_schema::keyed_numbers()));
  // [snippet: longer_than]
  // `longer_than` (filter, parameter `min`): the records whose text has at
  // least `min` bytes.
  r.add_operator(weir::plugin::filter_operator(
    "longer_than", {param<int64_t>("min", "shortest length kept")},
    [](const args& a) {
      auto min = a.get<int64_t>("min");
      return [min](const record& x) {
        return static_cast<int64_t>(x.text.size()) >= min;
      };
    }));
  // [end snippet]
  // [snippet: known_words]
  // `known_words` (filter): the records whose text is a line of the
  // attached file `list`, or with `invert`, the others. A factory that
  // takes the operator_context too runs when the operator opens, where the
  // job's files are.
  r.add_operator(weir::plugin::filter_operator(
    "known_words",
    {param<std::string>("list", "attached file (--file), one word a line"),
     param<bool>("invert", false, "keep the records not in the list")},
    [](const args& a, const ops::operator_context& ctx) {
      std::ifstream in{ctx.file(a.get<std::string>("list"))};
      std::set<std::string> words;
      for (std::string w; std::getline(in, w);)
        words.insert(w);
      return [words, invert = a.get<bool>("invert")](const record& x) {
        return (words.count(x.text) > 0) != invert;
      };
    }));
  // [end snippet]
  // [snippet: running_count]
  auto counts = weir::plugin::transform_operator(
    "running_count", {param<int64_t>("threshold", 1, "smallest count emitted")},
    [](const args& a) {
      return std::make_unique<running_count>(a.get<int64_t>("threshold"));
    });
  // It takes records and emits (key: string, value: int64).
  counts.output_schema = weir::plugin::record_output(
    "running_count", weir::default_schema::keyed_numbers());
  r.add_operator(std::move(counts));
  // [end snippet]
  auto timeouts = weir::plugin::transform_operator(
    "count_with_timeout",
    {param<int64_t>("timeout_ms", "event time without a record after which "
                                  "a key's count is emitted")},
    [](const args& a) {
      auto timeout = a.get<int64_t>("timeout_ms");
      if (timeout < 1)
        throw ops::operator_error("parameter 'timeout_ms': must be at least 1");
      return std::make_unique<count_with_timeout>(timeout);
    });
  timeouts.output_schema = weir::plugin::record_output(
    "count_with_timeout", weir::default_schema::keyed_numbers());
  r.add_operator(std::move(timeouts));
  r.add_operator(ops::window_function_operator("distinct_values",
                                               distinct_values()));
  ops::operator_factory text;
  text.name = "inline_text";
  text.make_source = [](const ops::params& p) {
    auto i = p.find("text");
    return std::make_unique<inline_text>(i == p.end() ? "" : i->second);
  };
  text.bounded = [](const ops::params&) { return true; };
  text.output_schema = [](const ops::params&, const ops::schema_query&) {
    return ops::derived_schema{weir::default_schema::lines(), {}};
  };
  r.add_operator(std::move(text));
  ops::operator_factory top;
  top.name = "top_n";
  top.make_transform = [](const ops::params& p) {
    if (auto problem = n_param(p); !problem.empty())
      throw ops::operator_error(problem);
    auto i = p.find("n");
    return std::make_unique<top_n>(i == p.end() ? 10 : std::stoul(i->second));
  };
  top.validate = [](const ops::params& p, ops::role) { return n_param(p); };
  top.output_schema = [](const ops::params&, const ops::schema_query& q) {
    if (q.input == nullptr || *q.input != weir::default_schema::keyed_numbers())
      return ops::derived_schema{
        {}, "top_n needs (key: string, value: int64), not "
              + (q.input ? to_string(*q.input) : std::string{"nothing"})};
    return ops::derived_schema{*q.input, {}};
  };
  r.add_operator(std::move(top));
  ops::operator_factory kb;
  kb.name = "kilobytes";
  kb.make_transform = [](const ops::params& p) {
    auto i = p.find("field");
    if (i == p.end())
      throw ops::operator_error("parameter 'field': missing");
    return std::make_unique<kilobytes>(i->second);
  };
  kb.output_schema = kilobytes::output;
  r.add_operator(std::move(kb));
}

} // namespace

WEIR_PLUGIN(setup)
