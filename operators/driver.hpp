#pragma once

// Driver programs (driver mode, `weir run -D`): a function in a user
// library that runs as a job of its own inside the cluster and submits
// other jobs. Part of the public API (installed with operators/plugin.hpp).

#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "messages/record.hpp"

namespace weir::plugin {

/// Jobs a driver submits are `normal` (they keep the application alive) or
/// `daemon` (cancelled once nothing else is left).
enum class job_priority { normal, daemon };

/// How a job ended, as its driver sees it.
struct job_outcome {
  std::string id;
  /// Flink's state name: FINISHED, FAILED or CANCELED.
  std::string state;
  /// Why it failed, else empty.
  std::string error;
  /// What its `collect` sinks gathered.
  std::vector<record> records;

  bool finished() const { return state == "FINISHED"; }
};

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

  /// Waits until job `id` has ended.
  virtual job_outcome wait(const std::string& id) = 0;

  /// Submits and waits; throws std::runtime_error when the job did not
  /// finish.
  job_outcome run(const std::string& spec_json) {
    auto outcome = wait(submit(spec_json));
    if (!outcome.finished())
      throw std::runtime_error("job " + outcome.id + " ended "
                               + outcome.state + ": " + outcome.error);
    return outcome;
  }

  /// A line for the application's output (printed by an attached client).
  virtual void print(const std::string& line) = 0;
};

/// A driver: returns the application's exit status (0: success; else the
/// driver job fails and an attached `weir run -D` or `weir wait` exits with
/// it, 1..255, docs/operations.md § Driver mode); an exception fails the
/// application with its message (exit 1).
using driver_function = std::function<int(driver_context&)>;

} // namespace weir::plugin
