#pragma once

// How a job built in code becomes the JobGraph that is submitted: one way
// for the C++ API's cluster_client and for a driver's jobs
// (docs/cpp-api.md § Reference). The spec is checked against the operators
// that will run it, as `weir run` checks a spec, and the job's settings
// (parallelism, configuration keys, a savepoint to start from) are applied
// and checked the same way.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <caf/expected.hpp>

#include "client/job_service.hpp"
#include "messages/checkpoint.hpp"
#include "messages/job_graph.hpp"

namespace weir::ops {
class registry;
} // namespace weir::ops

namespace weir::client {

/// What a job is submitted with, besides its spec and its code.
struct job_settings {
  /// The default parallelism of vertices without their own (`-p`).
  std::optional<int32_t> parallelism;
  /// Configuration keys of the job, as a spec's "config" (these win).
  std::map<std::string, std::string> config;
  /// A savepoint or retained checkpoint to start from (`-s`), and whether
  /// state in it that no vertex claims is skipped (`-n`).
  std::string savepoint_path;
  bool allow_non_restored_state = false;
};

/// What runs a driver (docs/operations.md § Driver mode): the name its
/// library registers it under (`-c`), its arguments, and the defaults of
/// the jobs it submits (`-p`, `-s`, `-n`).
struct driver_request {
  std::string name;
  std::vector<std::string> args;
  std::optional<int64_t> parallelism;
  std::string savepoint_path;
  bool allow_non_restored_state = false;
};

/// The driver's job: the driver operator, and a collect sink for what it
/// prints; the highest priority. Its library is the caller's to attach.
job_graph driver_job_graph(const driver_request& r);

/// The JobGraph of `spec_json` (`origin` names it in errors) with
/// `settings` applied, checked against `operators`: one line naming the
/// step, key or file otherwise (errc::invalid_job, errc::invalid_config).
/// A savepoint path is made absolute and must hold state that fits.
[[nodiscard]] caf::expected<job_graph>
plan_job(const std::string& spec_json, const std::string& origin,
         const job_settings& settings, const ops::registry& operators);

/// Checks that `path` (made absolute) is a savepoint or checkpoint file
/// weir can read; its contents into `data` when given.
[[nodiscard]] caf::error check_restore_file(std::string& path,
                                            savepoint_data* data = nullptr);

/// Reads the file at `path` as a blob of a job (`what`: "library" or
/// "file"), its bytes appended to `blobs` as (hash, bytes).
[[nodiscard]] caf::expected<blob_ref>
read_blob(const std::string& what, const std::string& path,
          std::vector<std::pair<std::string, std::string>>& blobs);

/// Stores `blobs` through `jobs`, then submits `g`: its id.
[[nodiscard]] caf::expected<job_id>
submit(job_service& jobs, const job_graph& g,
       std::vector<std::pair<std::string, std::string>> blobs = {});

/// A job that did not finish keeps its collect sinks' tables, empty: what
/// they held is a part that no client should take for the result.
void drop_partial_rows(job_result& result);

} // namespace weir::client
