#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/error.hpp>
#include <caf/meta/type_name.hpp>

#include "messages/ids.hpp"
#include "messages/schema.hpp"

namespace weir {

/// Largest parallelism a vertex may ask for (Flink's upper bound for max
/// parallelism, 2^15).
constexpr int32_t max_parallelism = 32768;

/// Longest job name, vertex id or operator name, in bytes: names end up in
/// every event-log line and status answer about their job, so a runaway
/// one (a file pasted into a spec) must not multiply into the logs.
constexpr size_t max_name_bytes = 256;

/// "" when `name` (what `field` names) is at most max_name_bytes long,
/// else "FIELD: N bytes, more than the 256 allowed".
std::string name_length_problem(std::string_view field, std::string_view name);

/// How records move along an edge from producer subtasks to consumer subtasks.
enum class partitioning : uint8_t {
  forward,   ///< subtask i → subtask i; needs equal parallelism
  hash,      ///< by key hash, so one key always reaches one consumer
  rebalance, ///< round-robin over all consumers
  broadcast, ///< every record to every consumer
};

std::string to_string(partitioning x);
std::optional<partitioning> parse_partitioning(std::string_view text);

/// How a vertex stamps event times on its rows and makes watermarks
/// (Flink's WatermarkStrategy; docs/event-time.md): the rows' event time is
/// their `field` (int64 milliseconds or a timestamp), and the watermark
/// trails the largest event time seen by `max_out_of_orderness_ms` (0:
/// monotonous timestamps). A subtask that emits no row for
/// `idle_timeout_ms` (0: never) is idle: its consumers leave it out of
/// their watermark until it emits again.
struct watermark_spec {
  std::string field;
  int64_t max_out_of_orderness_ms = 0;
  int64_t idle_timeout_ms = 0;
  /// pipeline.auto-watermark-interval as the JobMaster resolved it: a new
  /// watermark goes out at most this often (0: after every batch).
  int64_t interval_ms = 200;

  bool enabled() const { return !field.empty(); }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, watermark_spec& x) {
  return f(caf::meta::type_name("watermark_spec"), x.field,
           x.max_out_of_orderness_ms, x.idle_timeout_ms, x.interval_ms);
}

bool operator==(const watermark_spec& a, const watermark_spec& b);

/// One operator of a job: an id unique in the job, the operator's registered
/// name, its parameters (already resolved: no `${...}` left) and parallelism.
struct vertex_spec {
  std::string id;
  std::string op;
  std::map<std::string, std::string> params;
  int32_t parallelism = 1;
  /// The schema of the rows the vertex emits, as the planner derived it
  /// (plan/schemas.hpp); empty for a sink, and in JobGraphs stored before
  /// rows existed (derived again when they are loaded). `{}`: aggregate
  /// initializations without it need no -Wmissing-field-initializers fix.
  schema output{};
  /// Event times and watermarks made after the operator (none unless the
  /// spec's "watermarks" names a field).
  watermark_spec watermarks{};
  /// The schemas of the side outputs that edges take from it (Flink's
  /// OutputTag; edge_spec::output), as the planner derived them.
  std::map<std::string, schema> side_outputs{};
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, vertex_spec& x) {
  return f(caf::meta::type_name("vertex_spec"), x.id, x.op, x.params,
           x.parallelism, x.output, x.watermarks, x.side_outputs);
}

bool operator==(const vertex_spec& a, const vertex_spec& b);

/// A directed connection between two vertices.
struct edge_spec {
  std::string from;
  std::string to;
  partitioning part = partitioning::forward;
  /// Hash partitioning: the fields rows are keyed by, by name (the spec's
  /// "key"; by default "key" when the producer's schema has that field).
  std::vector<std::string> key{};
  /// The producer's side output this edge takes (its "output", e.g.
  /// "late"); empty: its main output.
  std::string output{};
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, edge_spec& x) {
  return f(caf::meta::type_name("edge_spec"), x.from, x.to, x.part, x.key,
           x.output);
}

bool operator==(const edge_spec& a, const edge_spec& b);

/// A file shipped with a job (a user library or an attached file): its
/// name (the file name), its content hash (XXH3-128, hex; the blob store's
/// key) and where the client read it. A node that sees the same content at
/// `origin` uses it there unless the job ships always (-b).
struct blob_ref {
  std::string name;
  std::string hash;
  std::string origin;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, blob_ref& x) {
  return f(caf::meta::type_name("blob_ref"), x.name, x.hash, x.origin);
}

bool operator==(const blob_ref& a, const blob_ref& b);

/// A job's user code: libraries (--libjars), attached files (--file),
/// paths every node loads libraries from without shipping them
/// (-C/--classpath), and whether blobs are always shipped (-b).
struct user_code {
  std::vector<blob_ref> libraries;
  std::vector<blob_ref> files;
  std::vector<std::string> classpath;
  bool always_ship = false;

  bool empty() const {
    return libraries.empty() && files.empty() && classpath.empty();
  }
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, user_code& x) {
  return f(caf::meta::type_name("user_code"), x.libraries, x.files,
           x.classpath, x.always_ship);
}

bool operator==(const user_code& a, const user_code& b);

/// Driver mode ranks jobs: the driver highest, the jobs it submits normal,
/// daemon jobs lowest (they do not keep the application alive).
enum class job_priority : int8_t { daemon = -1, normal = 0, driver = 1 };

std::string to_string(job_priority p);

/// What a client submits: a DAG of operators. Every vertex has its final
/// parallelism; the graph has been validated by `validate_job_graph`.
struct job_graph {
  job_id id;
  std::string name;
  std::vector<vertex_spec> vertices;
  std::vector<edge_spec> edges;
  /// The job's own configuration keys (e.g. restart-strategy.*), on top of
  /// the cluster's.
  std::map<std::string, std::string> config;
  /// Where each `config` key came from ("-Dkey=value", "weir.yaml:3", "spec
  /// job.json"), as /jobs/{id}/config shows it. Not part of the job's
  /// identity (operator== ignores it).
  std::map<std::string, std::string> config_origins;
  /// User libraries and files the job needs.
  user_code code;
  job_priority priority = job_priority::normal;
  /// The driver job whose application submitted this job (nil: none).
  job_id application;
};

template <class Inspector>
typename Inspector::result_type inspect(Inspector& f, job_graph& x) {
  return f(caf::meta::type_name("job_graph"), x.id, x.name, x.vertices,
           x.edges, x.config, x.config_origins, x.code, x.priority,
           x.application);
}

bool operator==(const job_graph& a, const job_graph& b);

/// Index of the vertex named `id`, or -1.
int32_t vertex_index(const job_graph& g, std::string_view id);

/// The schema of the rows edge `e` of `g` carries: its producer's output,
/// or the side output it takes (empty when there is no such vertex or side
/// output).
const schema& rows_of(const job_graph& g, const edge_spec& e);

/// Checks the graph's shape: names at most max_name_bytes long (the job's,
/// its vertices' ids and operators), vertex ids that are file names
/// (is_file_name: they name state files), unique vertex ids, edges between
/// existing vertices, no cycle, parallelism in [1, max_parallelism],
/// `forward` only between equal parallelisms, at least one source. Returns
/// none, or `errc::invalid_job` whose context is the first problem as one
/// line naming the vertex or edge. Operator names and parameters are
/// checked by the registry.
[[nodiscard]] caf::error check_job_graph_shape(const job_graph& g);

/// Vertex indices in topological order (sources first). Assumes no cycle.
std::vector<int32_t> topological_order(const job_graph& g);

} // namespace weir
