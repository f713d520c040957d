#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <caf/expected.hpp>

#include "plan/chaining.hpp" // describe_plan, compute_chains, vertex_role
#include "messages/job_graph.hpp"

namespace weir::ops {
class registry;
} // namespace weir::ops

namespace weir {

/// One vertex as written in a job spec: parameters may still hold `${name}`
/// references to job parameters, parallelism may be left to the job default.
struct spec_vertex {
  std::string id;
  std::string op;
  std::map<std::string, std::string> params;
  std::optional<int32_t> parallelism;
  /// "watermarks": event times and watermarks after the operator.
  watermark_spec watermarks{};
};

/// One edge as written in a job spec. Without a partitioning, the edge is
/// `forward` when both ends end up with equal parallelism and `rebalance`
/// otherwise (Flink's default).
struct spec_edge {
  std::string from;
  std::string to;
  std::optional<partitioning> part;
  /// "key": the fields a hash edge is keyed by (a name or an array of
  /// names); only with "partitioning": "hash". Empty: the planner's default
  /// (derive_schemas).
  std::vector<std::string> key;
  /// "output": the producer's side output the edge takes (e.g. a window's
  /// "late"); empty: its main output.
  std::string output;
};

/// A job spec file (JSON), syntax- and type-checked but not yet resolved
/// against program arguments, the CLI's `-p` and the operator registry.
struct job_spec {
  /// Where the spec came from (file path as given); prefixes every error.
  std::string origin;
  std::string name;
  /// Default parallelism of vertices without their own.
  int32_t parallelism = 1;
  /// Job parameters and their default values (all stored as strings).
  std::map<std::string, std::string> params;
  std::vector<spec_vertex> vertices;
  std::vector<spec_edge> edges;
  /// The job's own configuration keys ("config": {...}), e.g. its
  /// restart-strategy.*; checked against the known keys.
  std::map<std::string, std::string> config;
};

/// Reads and checks a job spec file. Errors (`errc::invalid_job`) are one
/// line naming the file and the field, e.g. "x.json:3:17: syntax error: ..."
/// or "x.json: vertices[2].operator: missing".
[[nodiscard]] caf::expected<job_spec> parse_job_spec(const std::string& path);

/// Like `parse_job_spec`, for a spec already in memory; `origin` names it in
/// errors.
[[nodiscard]] caf::expected<job_spec> parse_job_spec_text(std::string_view text,
                                            std::string origin);

/// Names of the job parameters, sorted (what `--name value` may override).
std::vector<std::string> param_names(const job_spec& spec);

/// Turns program arguments (`--name value` or `--name=value`) into a map from
/// parameter name to value; rejects anything else.
[[nodiscard]] caf::expected<std::map<std::string, std::string>>
parse_program_args(const std::vector<std::string>& args);

/// Builds the JobGraph: program arguments (names without `--`) override job
/// parameters, `${name}` in operator parameters is replaced, a vertex without
/// parallelism gets `default_parallelism` (the CLI's `-p`) or else the spec's.
/// Then validates it (`validate_job_graph` with `client_validation`:
/// configuration, shape, every operator against `operators`, default: the
/// built-in ones) and derives every edge's schema and key with the same
/// operators (`derive_schemas`). The job id is left nil.
[[nodiscard]] caf::expected<job_graph>
resolve_job_graph(const job_spec& spec,
                  const std::map<std::string, std::string>& program_args,
                  std::optional<int32_t> default_parallelism = std::nullopt,
                  const ops::registry* operators = nullptr);

} // namespace weir
