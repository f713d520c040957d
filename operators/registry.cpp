#include "operators/registry.hpp"

#include <fmt/format.h>

#include "operators/builtin/builtins.hpp"
#include "operators/builtin/interval_join.hpp"
#include "operators/builtin/windows.hpp"
#include "operators/in_process.hpp"

namespace weir::ops {

namespace {

/// `text_file` reads lines as a source and writes lines as a sink.
operator_factory text_file_factory() {
  operator_factory f;
  f.name = "text_file";
  f.make_source = make_text_file_source;
  f.make_sink = make_text_file_sink;
  f.validate = [](const params& p, role r) {
    return r == role::sink ? check_text_file_sink_params(p)
                           : check_text_file_params(p);
  };
  f.check_files = [](const params& p, role r) {
    return r == role::source ? check_text_file_source(p)
                             : check_text_file_sink(p);
  };
  f.path_params = {"path"};
  f.bounded = [](const params&) { return true; };
  f.output_schema = [](const params&, const schema_query& q) {
    return derived_schema{q.input ? schema{} : default_schema::lines(), {}};
  };
  f.guarantee = delivery_guarantee;
  f.splits_operator_state = true; // the exactly-once sink's files
  return f;
}

} // namespace

std::string to_string(role r) {
  switch (r) {
    case role::source:
      return "source";
    case role::transform:
      return "transform";
    case role::sink:
      return "sink";
  }
  return "unknown";
}

const registry& registry::builtin() {
  static const registry instance = [] {
    registry r;
    r.add(sequence_factory());
    r.add(elements_factory());
    r.add(generator_factory());
    r.add(text_file_factory());
    r.add(json_lines_factory());
    r.add(parse_factory());
    r.add(map_factory());
    r.add(flat_map_factory());
    r.add(filter_factory());
    r.add(project_factory());
    for (auto kind : {aggregation_kind::count, aggregation_kind::sum,
                      aggregation_kind::min, aggregation_kind::max,
                      aggregation_kind::avg})
      r.add(aggregation_factory(kind));
    r.add(window_factory());
    r.add(interval_join_factory());
    r.add(stdout_factory());
    r.add(discard_factory());
    r.add(collect_factory());
    r.add(driver_factory());
    return r;
  }();
  return instance;
}

void registry::add(operator_factory f) {
  auto name = f.name;
  factories_[std::move(name)] = std::move(f);
}

const operator_factory* registry::find(const std::string& name) const {
  auto i = factories_.find(name);
  // Then the program's own: a job builder's lambdas and the functions the
  // program names (operators/in_process.hpp).
  return i == factories_.end() ? find_in_process_operator(name) : &i->second;
}

sink_guarantee registry::guarantee_of(const std::string& name,
                                     const params& p) const {
  const auto* f = find(name);
  if (f == nullptr || !f->guarantee)
    return sink_guarantee::external_at_least_once;
  return f->guarantee(p);
}

void registry::add_driver(const std::string& name, plugin::driver_function f) {
  drivers_[name] = std::move(f);
}

const plugin::driver_function*
registry::find_driver(const std::string& name) const {
  auto i = drivers_.find(name);
  return i == drivers_.end() ? nullptr : &i->second;
}

std::vector<std::string> registry::driver_names() const {
  std::vector<std::string> out;
  for (const auto& entry : drivers_)
    out.push_back(entry.first);
  return out;
}

std::vector<std::string> registry::names() const {
  std::vector<std::string> out;
  out.reserve(factories_.size());
  for (const auto& entry : factories_)
    out.push_back(entry.first);
  return out;
}

std::string registry::check(const std::string& name, role r,
                            const params& p, file_checks files) const {
  const auto* f = find(name);
  if (f == nullptr)
    return unknown_operator(name);
  bool supported = (r == role::source && f->make_source)
                   || (r == role::transform && f->make_transform)
                   || (r == role::sink && f->make_sink);
  if (!supported)
    return fmt::format("operator '{}' cannot be a {}", name, to_string(r));
  if (f->validate)
    if (auto problem = f->validate(p, r); !problem.empty())
      return problem;
  if (files == file_checks::on && f->check_files)
    return f->check_files(p, r);
  return {};
}

} // namespace weir::ops

namespace weir::ops {

derived_schema default_output_schema(role r, const schema_query& q) {
  switch (r) {
    case role::source:
      return {default_schema::keyed_lines(), {}};
    case role::transform:
      return {q.input ? *q.input : schema{}, {}};
    case role::sink:
      break;
  }
  return {};
}

derived_schema registry::output_schema(const std::string& name, role r,
                                       const params& p,
                                       const schema_query& q) const {
  const auto* f = find(name);
  if (f == nullptr)
    return {{}, unknown_operator(name)};
  if (f->output_schema)
    return f->output_schema(p, q);
  return default_output_schema(r, q);
}

} // namespace weir::ops
