#include "api/job_builder.hpp"

#include <map>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "api/builder_operators.hpp"
#include "operators/in_process.hpp"
#include "operators/plugin.hpp"

namespace weir {

namespace detail {

/// One step: a vertex of the spec, and the edge it reads (none: a source).
struct step {
  std::string id;
  /// Whether name() gave the id (else it is the operator's, made unique at
  /// build()).
  bool named = false;
  std::string op;
  ops::params params;
  std::optional<int32_t> parallelism;
  /// The edges it reads (none: a source).
  std::vector<input_edge> inputs;
  /// For in-process steps: what it is ("a map lambda").
  std::string in_process;
  /// Its "watermarks" (empty: none).
  std::map<std::string, std::string> watermarks;
  /// A join's two sides: its params "left" and "right" name these steps'
  /// ids at build().
  std::optional<size_t> left;
  std::optional<size_t> right;
};

struct job_plan {
  std::string name;
  int32_t parallelism = 1;
  std::map<std::string, std::string> config;
  std::vector<step> steps;
};

} // namespace detail


// -- stream -------------------------------------------------------------------

stream stream::then(std::string op, ops::params p, std::string label) const {
  detail::step s;
  s.id = label.empty() ? ops::operator_label(op) : std::move(label);
  s.op = std::move(op);
  s.params = std::move(p);
  s.inputs = ends_;
  plan_->steps.push_back(std::move(s));
  return stream{plan_, plan_->steps.size() - 1};
}

stream stream::then_in_process(ops::operator_factory f,
                               std::string what) const {
  auto label = f.name;
  auto next = then(ops::add_in_process_operator(std::move(f)), {}, label);
  plan_->steps[next.step("then")].in_process = std::move(what);
  return next;
}

size_t stream::step(const char* call) const {
  if (ends_.size() != 1)
    throw std::logic_error(fmt::format(
      "{}(): a union of {} streams is not a step; call it on the step "
      "after the union",
      call, ends_.size()));
  return ends_.front().from;
}

stream stream::with_partitioning(std::string part,
                                 std::vector<std::string> key) const {
  auto copy = *this;
  for (auto& e : copy.ends_) {
    e.partitioning = part;
    e.key = key;
  }
  return copy;
}

stream stream::side_output(std::string name) const {
  auto copy = *this;
  for (auto& e : copy.ends_)
    e.output = name;
  return copy;
}

void stream::same_job(const stream& other, const char* call) const {
  if (other.plan_ != plan_)
    throw std::invalid_argument(fmt::format(
      "{}: step '{}' is of another job than step '{}'", call,
      other.plan_->steps[other.ends_.front().from].id,
      plan_->steps[ends_.front().from].id));
}

stream stream::union_with(const stream& other) const {
  same_job(other, "union_with");
  auto copy = *this;
  copy.ends_.insert(copy.ends_.end(), other.ends_.begin(), other.ends_.end());
  return copy;
}

connected_streams stream::connect(const stream& other) const {
  same_job(other, "connect");
  return connected_streams{*this, other};
}

namespace {

/// A co-map's two functions: one record in, one out.
api_ops::co_function as_flat(std::function<record(record&&)> f) {
  return [f = std::move(f)](record&& r, std::vector<record>& out) {
    out.push_back(f(std::move(r)));
  };
}

} // namespace

stream connected_streams::map(std::function<record(record&&)> first,
                              std::function<record(record&&)> second,
                              std::optional<schema> output) const {
  return flat_map(as_flat(std::move(first)), as_flat(std::move(second)),
                  std::move(output));
}

stream connected_streams::flat_map(
  std::function<void(record&&, std::vector<record>&)> first,
  std::function<void(record&&, std::vector<record>&)> second,
  std::optional<schema> output) const {
  auto both = first_.union_with(second_);
  if (both.ends_.size() != 2)
    throw std::invalid_argument("connect: each side must be one stream, not "
                                "a union");
  return both.then_in_process(api_ops::co_flat_map(std::move(first),
                                                   std::move(second),
                                                   std::move(output)),
                              "a co-map lambda");
}

stream stream::key_by(std::function<std::string(const record&)> selector) const {
  return then_in_process(api_ops::key_selector(std::move(selector)),
                         "a key selector lambda")
    .key_by();
}

stream stream::reduce(std::function<record(record&&, record&&)> f) const {
  return then_in_process(api_ops::rolling_reduce(std::move(f)),
                         "a reduce lambda");
}

stream stream::key_by(std::vector<std::string> fields) const {
  return with_partitioning("hash", std::move(fields));
}

stream stream::key_by(std::string field) const {
  return key_by(std::vector<std::string>{std::move(field)});
}

stream stream::rebalance() const {
  return with_partitioning("rebalance");
}

stream stream::broadcast() const {
  return with_partitioning("broadcast");
}

stream stream::forward() const {
  return with_partitioning("forward");
}

stream stream::map(std::function<record(record&&)> f,
                   std::optional<schema> output) const {
  return then_in_process(plugin::map_operator("map", std::move(f),
                                              std::move(output)),
                         "a map lambda");
}

stream stream::flat_map(std::function<void(record&&, std::vector<record>&)> f,
                        std::optional<schema> output) const {
  return then_in_process(plugin::flat_map_operator("flat_map", std::move(f),
                                                   std::move(output)),
                         "a flat_map lambda");
}

stream stream::filter(std::function<bool(const record&)> f) const {
  return then_in_process(plugin::filter_operator("filter", std::move(f)),
                         "a filter lambda");
}

namespace {

/// `f`'s name when it is a function of kind `want`; a map function given
/// to filter() would fail later, on the workers, with less to go on.
const std::string& of_kind(const user_function& f, user_function::kind want) {
  static const char* names[] = {"map", "flat_map", "filter"};
  static const char* macros[] = {"WEIR_MAP", "WEIR_FLAT_MAP", "WEIR_FILTER"};
  if (f.what != want) {
    auto is = static_cast<size_t>(f.what);
    throw std::invalid_argument(fmt::format(
      "'{}' is a {} function ({}): use .{}({})", f.name, names[is],
      macros[is], names[is], f.name));
  }
  return f.name;
}

} // namespace

stream stream::map(const user_function& f) const {
  return then(of_kind(f, user_function::kind::map), {});
}

stream stream::flat_map(const user_function& f) const {
  return then(of_kind(f, user_function::kind::flat_map), {});
}

stream stream::filter(const user_function& f) const {
  return then(of_kind(f, user_function::kind::filter), {});
}

namespace {

ops::params with_function(const std::string& function, ops::params p) {
  p["function"] = function;
  return p;
}

ops::params aggregate_params(std::string field, std::string as) {
  ops::params p;
  if (!field.empty())
    p["field"] = std::move(field);
  if (!as.empty())
    p["as"] = std::move(as);
  return p;
}

} // namespace

stream stream::map(const std::string& function, ops::params p) const {
  return then("map", with_function(function, std::move(p)));
}

stream stream::flat_map(const std::string& function, ops::params p) const {
  return then("flat_map", with_function(function, std::move(p)));
}

stream stream::filter(const std::string& function, ops::params p) const {
  return then("filter", with_function(function, std::move(p)));
}

stream stream::where(std::string condition) const {
  return then("filter", {{"where", std::move(condition)}});
}

stream stream::select(std::string expressions) const {
  return then("map", {{"select", std::move(expressions)}});
}

stream stream::project(const std::vector<std::string>& fields) const {
  std::string list;
  for (auto& f : fields)
    list += (list.empty() ? "" : ",") + f;
  return then("project", {{"fields", list}});
}

stream stream::count(std::string as) const {
  return then("count", aggregate_params({}, std::move(as)));
}

stream stream::sum(std::string field, std::string as) const {
  return then("sum", aggregate_params(std::move(field), std::move(as)));
}

stream stream::min(std::string field, std::string as) const {
  return then("min", aggregate_params(std::move(field), std::move(as)));
}

stream stream::max(std::string field, std::string as) const {
  return then("max", aggregate_params(std::move(field), std::move(as)));
}

stream stream::avg(std::string field, std::string as) const {
  return then("avg", aggregate_params(std::move(field), std::move(as)));
}

// -- event time ---------------------------------------------------------------

namespace {

std::string as_duration(std::chrono::milliseconds d) {
  return fmt::format("{} ms", d.count());
}

} // namespace

stream stream::watermarks(std::string field,
                          std::chrono::milliseconds max_out_of_orderness,
                          std::chrono::milliseconds idle_timeout) const {
  auto& w = plan_->steps[step("watermarks")].watermarks;
  w = {{"field", std::move(field)},
       {"strategy", "bounded-out-of-orderness"},
       {"max-out-of-orderness", as_duration(max_out_of_orderness)}};
  if (idle_timeout.count() != 0)
    w["idle-timeout"] = as_duration(idle_timeout);
  return *this;
}

stream stream::monotonous_watermarks(std::string field,
                                     std::chrono::milliseconds idle_timeout) const {
  auto& w = plan_->steps[step("monotonous_watermarks")].watermarks;
  w = {{"field", std::move(field)}, {"strategy", "monotonous"}};
  if (idle_timeout.count() != 0)
    w["idle-timeout"] = as_duration(idle_timeout);
  return *this;
}

windowed_stream stream::window(const window_assigner& w) const {
  return windowed_stream{*this, w.params};
}

stream stream::interval_join(const stream& other,
                             std::chrono::milliseconds lower,
                             std::chrono::milliseconds upper) const {
  same_job(other, "interval_join");
  auto left = step("interval_join");
  auto right = other.step("interval_join");
  auto next = union_with(other).then("interval_join",
                                     {{"lower", as_duration(lower)},
                                      {"upper", as_duration(upper)}});
  auto& s = plan_->steps[next.step("interval_join")];
  s.left = left;
  s.right = right;
  return next;
}

window_assigner window_assigner::tumbling(std::chrono::milliseconds size,
                                          std::chrono::milliseconds offset) {
  window_assigner w;
  w.params = {{"type", "tumbling"}, {"size", as_duration(size)}};
  if (offset.count() != 0)
    w.params["offset"] = as_duration(offset);
  return w;
}

window_assigner window_assigner::sliding(std::chrono::milliseconds size,
                                         std::chrono::milliseconds slide,
                                         std::chrono::milliseconds offset) {
  auto w = tumbling(size, offset);
  w.params["type"] = "sliding";
  w.params["slide"] = as_duration(slide);
  return w;
}

window_assigner window_assigner::session(std::chrono::milliseconds gap) {
  window_assigner w;
  w.params = {{"type", "session"}, {"gap", as_duration(gap)}};
  return w;
}

stream windowed_stream::aggregate(std::string kind, std::string field,
                                  std::string as) const {
  auto p = params_;
  p["aggregate"] = std::move(kind);
  for (auto& [k, v] : aggregate_params(std::move(field), std::move(as)))
    p[k] = v;
  return input_.then("window", std::move(p));
}

stream windowed_stream::aggregate(ops::window_aggregate_function f) const {
  auto next = input_.then_in_process(
    ops::window_function_operator("window", std::move(f)),
    "a window function");
  next.plan_->steps[next.step("aggregate")].params = params_;
  return next;
}

stream windowed_stream::reduce(
  std::function<record(record&&, record&&)> f) const {
  return aggregate(ops::reduce_function(std::move(f)));
}

windowed_stream windowed_stream::allowed_lateness(
  std::chrono::milliseconds d) const {
  auto copy = *this;
  copy.params_["allowed-lateness"] = as_duration(d);
  return copy;
}

stream windowed_stream::count(std::string as) const {
  return aggregate("count", {}, std::move(as));
}

stream windowed_stream::sum(std::string field, std::string as) const {
  return aggregate("sum", std::move(field), std::move(as));
}

stream windowed_stream::min(std::string field, std::string as) const {
  return aggregate("min", std::move(field), std::move(as));
}

stream windowed_stream::max(std::string field, std::string as) const {
  return aggregate("max", std::move(field), std::move(as));
}

stream windowed_stream::avg(std::string field, std::string as) const {
  return aggregate("avg", std::move(field), std::move(as));
}

stream stream::apply(const std::string& op, ops::params p) const {
  return then(op, std::move(p));
}

stream stream::apply(ops::operator_factory f) const {
  auto what = fmt::format("a transform '{}' of this program", f.name);
  return then_in_process(std::move(f), std::move(what));
}

stream stream::collect() const {
  return then("collect", {});
}

stream stream::print() const {
  return then("stdout", {});
}

stream stream::discard() const {
  return then("discard", {});
}

stream stream::write_text_file(std::string path, std::string format,
                               bool exactly_once) const {
  ops::params p{{"path", std::move(path)}};
  if (!format.empty())
    p["format"] = std::move(format);
  if (exactly_once)
    p["delivery"] = "exactly-once";
  return then("text_file", std::move(p));
}

stream stream::to(const std::string& op, ops::params p) const {
  return then(op, std::move(p));
}

stream stream::to(ops::operator_factory f) const {
  auto what = fmt::format("a sink '{}' of this program", f.name);
  return then_in_process(std::move(f), std::move(what));
}

stream stream::name(std::string id) const {
  auto& s = plan_->steps[step("name")];
  s.id = std::move(id);
  s.named = true;
  return *this;
}

stream stream::parallelism(int32_t p) const {
  plan_->steps[step("parallelism")].parallelism = p;
  return *this;
}

const std::string& stream::id() const {
  return plan_->steps[step("id")].id;
}

// -- job_builder --------------------------------------------------------------

job_builder::job_builder(std::string name)
  : plan_(std::make_shared<detail::job_plan>()) {
  plan_->name = std::move(name);
}

job_builder& job_builder::parallelism(int32_t p) {
  plan_->parallelism = p;
  return *this;
}

job_builder& job_builder::config(std::string key, std::string value) {
  plan_->config[std::move(key)] = std::move(value);
  return *this;
}

stream job_builder::source(const std::string& op, ops::params p) {
  detail::step s;
  s.id = ops::operator_label(op);
  s.op = op;
  s.params = std::move(p);
  plan_->steps.push_back(std::move(s));
  return stream{plan_, plan_->steps.size() - 1};
}

namespace {

/// The `values` parameter of an `elements` source: a JSON array of
/// numbers, strings or [key, value] pairs, all of one kind.
std::string elements_json(const std::vector<record>& records) {
  if (records.empty())
    throw std::invalid_argument("from_elements: no elements");
  auto& first = records.front();
  nlohmann::json values = nlohmann::json::array();
  for (size_t i = 0; i < records.size(); ++i) {
    auto& r = records[i];
    if (r.is_text != first.is_text || r.key.empty() != first.key.empty())
      throw std::invalid_argument(fmt::format(
        "from_elements: element {} is {} with {}, element 0 {} with {}", i,
        r.key.empty() ? "unkeyed" : "keyed", r.is_text ? "text" : "an int64",
        first.key.empty() ? "unkeyed" : "keyed",
        first.is_text ? "text" : "an int64"));
    nlohmann::json value = r.is_text ? nlohmann::json(r.text)
                                     : nlohmann::json(r.num);
    if (r.key.empty())
      values.push_back(std::move(value));
    else
      values.push_back(nlohmann::json::array({r.key, std::move(value)}));
  }
  return values.dump();
}

} // namespace

stream job_builder::from_elements(const std::vector<record>& records) {
  return source("elements", {{"values", elements_json(records)}});
}

stream job_builder::from_elements(const std::vector<int64_t>& values) {
  std::vector<record> records;
  for (auto v : values)
    records.push_back(record::integer({}, v));
  return from_elements(records);
}

stream job_builder::from_elements(const std::vector<std::string>& values) {
  std::vector<record> records;
  for (auto& v : values)
    records.push_back(record::string({}, v));
  return from_elements(records);
}

stream job_builder::read_text_file(std::string path) {
  return source("text_file", {{"path", std::move(path)}});
}

stream job_builder::sequence(int64_t from, int64_t to) {
  return source("sequence",
                {{"from", std::to_string(from)}, {"to", std::to_string(to)}});
}

stream job_builder::source(ops::operator_factory f) {
  auto label = f.name;
  auto what = fmt::format("a source '{}' of this program", f.name);
  auto s = source(ops::add_in_process_operator(std::move(f)));
  plan_->steps[s.step("source")].id = label;
  plan_->steps[s.step("source")].in_process = std::move(what);
  return s;
}

namespace {

/// Step ids as the spec gets them: named ones as given (two alike are
/// refused), the others their operator's name, numbered from the second
/// on ("map", "map_2") past every name taken.
std::vector<std::string> step_ids(const detail::job_plan& plan) {
  std::set<std::string> taken;
  for (auto& s : plan.steps)
    if (s.named && !taken.insert(s.id).second)
      throw std::invalid_argument(fmt::format(
        "job '{}': two steps are named '{}'", plan.name, s.id));
  std::vector<std::string> ids;
  for (auto& s : plan.steps) {
    if (s.named) {
      ids.push_back(s.id);
      continue;
    }
    auto id = s.id;
    for (int n = 2; taken.count(id) != 0; ++n)
      id = fmt::format("{}_{}", s.id, n);
    taken.insert(id);
    ids.push_back(id);
  }
  return ids;
}

} // namespace

job_definition job_builder::build() const {
  auto ids = step_ids(*plan_);
  nlohmann::json vertices = nlohmann::json::array();
  nlohmann::json edges = nlohmann::json::array();
  job_definition def;
  def.name = plan_->name;
  for (size_t i = 0; i < plan_->steps.size(); ++i) {
    auto& s = plan_->steps[i];
    nlohmann::json v = {{"id", ids[i]}, {"operator", s.op}};
    auto params = s.params;
    if (s.left && s.right) {
      params["left"] = ids[*s.left];
      params["right"] = ids[*s.right];
    }
    if (!params.empty())
      v["params"] = params;
    if (s.parallelism)
      v["parallelism"] = *s.parallelism;
    if (!s.watermarks.empty())
      v["watermarks"] = s.watermarks;
    vertices.push_back(std::move(v));
    for (auto& in : s.inputs) {
      nlohmann::json e = {{"from", ids[in.from]}, {"to", ids[i]}};
      if (!in.partitioning.empty())
        e["partitioning"] = in.partitioning;
      if (!in.key.empty())
        e["key"] = in.key;
      if (!in.output.empty())
        e["output"] = in.output;
      edges.push_back(std::move(e));
    }
    if (!s.in_process.empty())
      def.in_process_steps.push_back(
        fmt::format("step '{}' ({})", ids[i], s.in_process));
  }
  nlohmann::json spec = {{"name", plan_->name},
                         {"parallelism", plan_->parallelism},
                         {"vertices", std::move(vertices)},
                         {"edges", std::move(edges)}};
  if (!plan_->config.empty())
    spec["config"] = plan_->config;
  def.spec_json = spec.dump(2);
  return def;
}

} // namespace weir
