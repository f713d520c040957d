#pragma once

#include <string>

#include "operators/driver.hpp"

namespace weir::ops {

/// What the runtime lends a running driver: its cluster's Dispatcher, to
/// submit jobs and wait for them (implemented by the TaskExecutor; the
/// driver runs on a thread of its own, so these calls block).
class driver_services {
public:
  virtual ~driver_services() = default;

  /// Submits a JSON job spec as a job of the driver's application; throws
  /// std::runtime_error with the reason when it is refused.
  virtual std::string submit(const std::string& spec_json,
                             plugin::job_priority priority)
    = 0;

  /// Blocks until job `id` has ended.
  virtual job_result wait(const std::string& id) = 0;

  /// A line of the application's output, handed to the driver job's
  /// JobMaster at once (an attached client streams it).
  virtual void print(const std::string& line) = 0;

  /// The driver returned `status` (not 0): tells the driver job's
  /// JobMaster, before the driver's subtask fails, so that the job's result
  /// carries it as the application's exit status.
  virtual void returned(int status) = 0;
};

/// The name of the built-in operator that runs a driver (the only vertex of
/// a driver job besides its collect sink).
constexpr const char* driver_operator_name = "weir.driver";

/// Encodes program arguments for the driver operator's `args` parameter,
/// and back.
std::string encode_driver_args(const std::vector<std::string>& args);
std::vector<std::string> decode_driver_args(const std::string& text);

} // namespace weir::ops
