#pragma once

// Driver programs (driver mode, `weir run -D`): a function in a user
// library that runs as a job of its own inside the cluster and submits
// other jobs. Part of the public API (installed with operators/plugin.hpp).

#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "messages/job_result.hpp"
#include "messages/record.hpp"

namespace weir::plugin {

/// Jobs a driver submits are `normal` (they keep the application alive) or
/// `daemon` (cancelled once nothing else is left).
enum class job_priority { normal, daemon };

/// A job built in code (api/job_builder.hpp).
struct job_definition {
  std::string name;
  /// The job as a JSON job spec, the format of `weir run SPEC`.
  std::string spec_json;
  /// What only this process can run: its lambdas and actor sinks, one line
  /// each ("step 'shout' (a map lambda)"). Only an embedded cluster of this
  /// process runs a job that has any.
  std::vector<std::string> in_process_steps;
};

/// Why `job` cannot run on a cluster in another process, or "" when it
/// can: one line naming its first in-process step.
inline std::string cannot_travel(const job_definition& job) {
  if (job.in_process_steps.empty())
    return {};
  return "job '" + job.name + "': " + job.in_process_steps.front()
         + " exists only in this process, so a cluster in another process "
           "cannot run it: define the function with WEIR_MAP, "
           "WEIR_FLAT_MAP or WEIR_FILTER in a library the cluster loads "
           "(--libjars, the driver's library), or run the job on an "
           "embedded cluster";
}

/// What a driver can do: read its arguments and attached files, submit jobs
/// and wait for them, print to the application's output.
class driver_context {
public:
  virtual ~driver_context() = default;

  /// The program arguments given after the driver's name on the command
  /// line.
  virtual const std::vector<std::string>& args() const = 0;

  /// The local path of an attached file (`--file`), by its file name;
  /// throws std::runtime_error naming it when there is none.
  virtual std::string file(const std::string& name) const = 0;

  /// Submits a job given as a JSON job spec (the format of `weir run`); it
  /// can use the driver's libraries. Returns the job id; throws
  /// std::runtime_error with the reason when the job is refused.
  virtual std::string submit(const std::string& spec_json,
                             job_priority priority = job_priority::normal)
    = 0;

  /// Submits a job built in code; throws std::runtime_error when it is
  /// refused, or when it has steps that exist only in the driver's process
  /// (cannot_travel: the driver's jobs run on other workers).
  std::string submit(const job_definition& job,
                     job_priority priority = job_priority::normal) {
    if (auto why = cannot_travel(job); !why.empty())
      throw std::runtime_error(why);
    return submit(job.spec_json, priority);
  }

  /// Waits until job `id` has ended: its result, the type a host program's
  /// cluster_client gets (state, error, counters, one table of rows per
  /// collect sink: job_result::table); a job that did not finish comes
  /// back with empty tables.
  virtual job_result wait(const std::string& id) = 0;

  /// Submits and waits; throws std::runtime_error when the job did not
  /// finish.
  job_result run(const std::string& spec_json) {
    return finished(wait(submit(spec_json)));
  }
  job_result run(const job_definition& job) {
    return finished(wait(submit(job)));
  }

  /// A line for the application's output (printed by an attached client).
  virtual void print(const std::string& line) = 0;

private:
  static job_result finished(job_result result) {
    if (!result.finished())
      throw std::runtime_error("job " + result.id.to_string() + " ended "
                               + std::string{to_string(result.state)} + ": "
                               + result.error);
    return result;
  }
};

/// A driver: returns the application's exit status (0: success; else the
/// driver job fails and an attached `weir run -D` or `weir wait` exits with
/// it, 1..255, docs/operations.md § Driver mode); an exception fails the
/// application with its message (exit 1).
using driver_function = std::function<int(driver_context&)>;

} // namespace weir::plugin
