#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include "client/job_service.hpp"
#include "config/config.hpp"

namespace weir::cli {

/// Parses an action's flags; prints the help or a one-line error. Returns
/// the exit code to end with, or -1 to go on.
int parse_flags(cxxopts::Options& opts, const std::string& action,
                const std::vector<std::string>& args, cxxopts::ParseResult& out);

/// Waits for job `id`'s result and prints it like `weir run` (records on
/// stdout, status on stderr, progress on a terminal; Ctrl-C cancels).
/// With `stream`, collected records are printed while the job runs (a
/// driver's output). Returns the exit code; 3 with a one-line error when
/// the master is lost (a client of an etcd-named cluster waits for the
/// next leader first: ha/leader_jobs.hpp), naming `address` (-m) to
/// wait there again.
int wait_for_job(client::job_service& jobs, job_id id,
                 const std::string& action, bool stream = false,
                 const std::string& address = "");

class remote_cluster;

/// The options of a job action (`weir status` and the like): -m, JOBID (a
/// positional argument), --config, -D and -h; `usage` follows
/// "[-m HOST:PORT] JOBID" in the usage line. Actions add their own flags.
cxxopts::Options job_action_flags(const std::string& action,
                                  const std::string& about,
                                  const std::string& usage = "");

/// Parses a job action's command line with `opts` (job_action_flags() and
/// the action's own) into `res` and connects. Returns the job id, or
/// nothing with `code` set after printing the help or a one-line error.
std::optional<job_id> connect_for_job(const std::string& action,
                                      cxxopts::Options& opts,
                                      const std::vector<std::string>& args,
                                      remote_cluster& remote, int& code,
                                      cxxopts::ParseResult& res);

/// The job id of a parsed job action: nothing, with `code` set, after a
/// one-line error (missing, not a job id).
std::optional<job_id> job_id_flag(const std::string& action,
                                  const cxxopts::ParseResult& res, int& code);

/// Exit code of a failed request about one job: 2 for an unknown job or a
/// setting it lacks (no savepoint directory), else 3.
int exit_code_for_job_error(const caf::error& err);

/// The line for a failed request about job `id`: the error, and for a lost
/// master how to find the job again at `address` (-m) once a jobmanager
/// is back.
std::string job_error_line(const std::string& action, const caf::error& err,
                           const job_id& id, const std::string& address);

/// A client's connection to a session cluster: its jobmanager's REST API
/// (`-m HOST:PORT`, http:// or https:// in front to choose; by default
/// HTTPS exactly when the configuration secures the REST API), or the
/// REST API of the leader that etcd names (`-m etcd://HOST:PORT`).
class remote_cluster {
public:
  remote_cluster();
  ~remote_cluster();

  /// Connects to the REST API named by `-m`, or else by the configuration
  /// (rest.address, else jobmanager.rpc.address, and rest.port). Returns
  /// the exit code to end with after a one-line error, or -1 when
  /// connected.
  int connect(const std::string& action, const cxxopts::ParseResult& flags);

  /// Connects to `address` (as -m gives it); as above.
  int connect(const std::string& action, const std::string& address,
              const configuration& cfg);

  client::job_service& jobs() { return *jobs_; }

  /// The address connected to, as given (-m) or configured.
  const std::string& address() const { return address_; }

private:
  std::unique_ptr<client::job_service> jobs_;
  std::string address_;
};

} // namespace weir::cli
