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

#include "messages/record.hpp"

namespace weir::plugin {

/// Jobs a driver submits are `normal` (they keep the application alive) or
/// `daemon` (cancelled once nothing else is left).
enum class job_priority { normal, daemon };

/// One vertex of an ended job: its records (summed over its subtasks and
/// the job's attempts; a source's in are those it read, a sink's out those
/// it wrote) and its operator's user counters (ops::counter).
struct vertex_outcome {
  std::string id;
  int64_t records_in = 0;
  int64_t records_out = 0;
  /// By name; a counter the operator registered is here even at 0.
  std::map<std::string, int64_t> counters;
};

/// How a job ended, as its driver sees it.
struct job_outcome {
  std::string id;
  /// Flink's state name: FINISHED, FAILED or CANCELED.
  std::string state;
  /// Why it failed, else empty.
  std::string error;
  /// What its `collect` sinks gathered.
  std::vector<record> records;
  /// From its start to its end, in milliseconds.
  int64_t runtime_ms = 0;
  /// Records in and out of the whole job (its sources' in, its sinks' out).
  int64_t records_in = 0;
  int64_t records_out = 0;
  /// Every vertex, in the job's order.
  std::vector<vertex_outcome> vertices;

  bool finished() const { return state == "FINISHED"; }

  /// Vertex `id`; throws std::out_of_range naming it when the job has none.
  const vertex_outcome& vertex(const std::string& vertex_id) const {
    for (auto& v : vertices)
      if (v.id == vertex_id)
        return v;
    throw std::out_of_range("job " + id + " has no vertex '" + vertex_id
                            + "'");
  }

  /// The counter `name` of vertex `vertex_id` (e.g. counter("tokens",
  /// "bad_lines")); throws std::out_of_range when its operator registered
  /// no such counter (a typo, or a job that failed before the operator
  /// opened).
  int64_t counter(const std::string& vertex_id, const std::string& name) const {
    auto& v = vertex(vertex_id);
    auto i = v.counters.find(name);
    if (i == v.counters.end())
      throw std::out_of_range("job " + id + ": vertex '" + vertex_id
                              + "' has no counter '" + name + "'");
    return i->second;
  }
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

/// A driver: returns the application's exit status (0: success); an
/// exception fails the application with its message.
using driver_function = std::function<int(driver_context&)>;

} // namespace weir::plugin
