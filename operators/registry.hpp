#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "operators/driver.hpp"
#include "operators/operator.hpp"

namespace weir::ops {

/// Whether checking a job also looks at this host's file system (input files
/// exist, output directories exist): yes where the job runs on this host (a
/// local cluster's client), no in a Dispatcher whose jobs run on other hosts.
enum class file_checks { on, off };

/// Where a vertex sits in the graph decides which kind of operator it needs:
/// no inputs → source, no outputs → sink, otherwise transform.
enum class role { source, transform, sink };

std::string to_string(role r);

/// What a sink's output guarantees when its job fails over and runs again
/// from a checkpoint: whether the JobMaster may resume the job from one.
enum class sink_guarantee {
  /// Written to the outside world; a restart writes it again (stdout,
  /// text_file; user sinks unless they say otherwise).
  external_at_least_once,
  /// Written to the outside world and published only when a checkpoint
  /// completes (text_file with delivery exactly-once).
  external_exactly_once,
  /// Handed to the JobMaster for the job's result (collect): it cuts the
  /// records back to a checkpoint itself.
  collected_by_job_master,
  /// Dropped (discard).
  discarded,
};

/// One parameter an operator declares (plugin_params.hpp), as `weir info
/// --libjars LIB` lists it.
struct param_doc {
  std::string name;
  /// "int64", "double", "bool" or "string".
  std::string type;
  bool required = false;
  /// An optional parameter's default, as text ("" when none).
  std::string fallback;
  std::string description;
};

/// How to build and check one named operator.
struct operator_factory {
  std::string name;
  std::function<std::unique_ptr<source>(const params&)> make_source;
  std::function<std::unique_ptr<transform>(const params&)> make_transform;
  std::function<std::unique_ptr<sink>(const params&)> make_sink;
  /// Checks parameters for a role; returns "" or one line naming the
  /// parameter, e.g. "parameter 'from': 'abc' is not an integer".
  std::function<std::string(const params&, role)> validate;
  /// Checks parameters against this host's file system (after `validate`
  /// passed), e.g. "parameter 'path': file 'x.txt' does not exist".
  std::function<std::string(const params&, role)> check_files;
  /// Parameters that name a file or directory ("-": stdout or stdin). The
  /// client makes relative ones absolute against its working directory
  /// before it checks them, so workers open what the client checked; a
  /// sink's may not name a source's.
  std::vector<std::string> path_params;
  /// The parameters it declares, for listings (empty: none declared).
  std::vector<param_doc> declared_params;
  /// Keyed aggregations: partial aggregates of this operator can be combined
  /// before a hash exchange (count, sum, min, max).
  bool combinable = false;
  /// Its operators split their operator state over another parallelism
  /// (they override restore_rescaled). When false, `weir run -s` refuses
  /// to restore a vertex that kept operator state at another parallelism.
  bool splits_operator_state = false;
  /// Its vertex takes two inputs whose schemas differ (interval_join): the
  /// planner hands both to output_schema (schema_query::inputs) and the
  /// runtime tells the operator which input each batch came from
  /// (transform::process_input).
  bool two_inputs = false;
  /// The side outputs the operator offers for these parameters and input,
  /// by name, with their schemas (Flink's OutputTag; a window's "late"):
  /// an edge with "output": NAME takes one. Unset: none.
  std::function<std::map<std::string, schema>(const params&,
                                              const schema_query&)>
    side_outputs;
  /// Sources: whether, with these parameters, it ends by itself.
  std::function<bool(const params&)> bounded;
  /// Sinks: what their output guarantees, with these parameters (unset:
  /// external_at_least_once).
  std::function<sink_guarantee(const params&)> guarantee;
  /// The schema of what the operator emits with these parameters and this
  /// input (sinks: the empty schema, or a problem with the input). Unset:
  /// a transform emits its input's schema, a sink takes any, a source
  /// emits default_schema::keyed_lines().
  std::function<derived_schema(const params&, const schema_query&)>
    output_schema;
};

/// What an operator whose factory sets no output_schema emits: a source
/// default_schema::keyed_lines(), a transform its input, a sink nothing.
derived_schema default_output_schema(role r, const schema_query& q);

/// Operators (and drivers) by name. `builtin()` holds weir's own
/// operators; library_loader.hpp adds those of user libraries.
class registry {
public:
  /// The registry with all built-in operators.
  static const registry& builtin();

  void add(operator_factory f);

  /// nullptr when no operator has this name, here or among the process's
  /// own (operators/in_process.hpp).
  const operator_factory* find(const std::string& name) const;

  /// Whether this registry itself has operator `name`.
  bool has_own(const std::string& name) const {
    return factories_.count(name) != 0;
  }

  void add_driver(const std::string& name, plugin::driver_function f);

  /// nullptr when no driver has this name.
  const plugin::driver_function* find_driver(const std::string& name) const;

  /// What sink `name` with parameters `p` guarantees: its factory's
  /// answer, external_at_least_once for sinks that give none or are unknown
  /// here (a user library's).
  sink_guarantee guarantee_of(const std::string& name, const params& p) const;

  /// Names of all drivers, sorted.
  std::vector<std::string> driver_names() const;

  /// Names of all operators, sorted.
  std::vector<std::string> names() const;

  /// Checks that `name` exists, supports `r` and accepts `p`. Returns "" or
  /// one line such as "unknown operator 'foo'", "operator 'count' cannot be
  /// a source" or "parameter 'path': ...".
  std::string check(const std::string& name, role r, const params& p,
                    file_checks files = file_checks::on) const;

  /// What operator `name` emits with `p` given `q` (the factory's
  /// output_schema, or its default); unknown operators are a problem.
  derived_schema output_schema(const std::string& name, role r,
                               const params& p, const schema_query& q) const;

private:
  std::map<std::string, operator_factory> factories_;
  std::map<std::string, plugin::driver_function> drivers_;
};

} // namespace weir::ops
