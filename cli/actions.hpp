#pragma once

#include <string>
#include <vector>

namespace weir::cli {

/// The `weir` program: `args` (without the program name) name an action
/// and its arguments; returns the exit code.
int weir_main(std::vector<std::string> args,
              const std::string& allocator = "the system's malloc");

/// `weir run`: runs a job on the embedded local cluster.
int run_action(const std::vector<std::string>& args);

/// `weir run -D`: runs a driver program (driver mode).
int driver_run_action(const std::vector<std::string>& args);

/// `weir info`: prints a job's execution plan without running it.
int info_action(const std::vector<std::string>& args);

/// `weir jobmanager`: the master process of a session cluster.
int jobmanager_action(const std::vector<std::string>& args);

/// `weir taskmanager`: a worker process of a session cluster.
int taskmanager_action(const std::vector<std::string>& args);

/// `weir list`: the jobs of a session cluster.
int list_action(const std::vector<std::string>& args);

/// `weir status`: one job of a session cluster, subtask by subtask.
int status_action(const std::vector<std::string>& args);

/// `weir wait`: waits for a job of a session cluster and prints its result.
int wait_action(const std::vector<std::string>& args);

/// `weir cancel`: cancels a job of a session cluster.
int cancel_action(const std::vector<std::string>& args);

/// `weir checkpoint`: takes a checkpoint of a running job now.
int checkpoint_action(const std::vector<std::string>& args);

/// `weir savepoint`: takes a savepoint of a running job, or disposes of one.
int savepoint_action(const std::vector<std::string>& args);

/// `weir stop`: stops a running job with a savepoint.
int stop_action(const std::vector<std::string>& args);

/// `weir rescale`: runs a running job at another parallelism, in place.
int rescale_action(const std::vector<std::string>& args);

/// `weir repair-state`: drops damaged records of a state directory.
int repair_state_action(const std::vector<std::string>& args);

/// `weir cert`: makes the cluster's CA, or a node or client certificate.
int cert_action(const std::vector<std::string>& args);

} // namespace weir::cli
