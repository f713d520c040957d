#pragma once

#include <string>
#include <vector>

#include <sys/types.h>

namespace weir::cli {

/// The path of this program (an application cluster and its workers run
/// it).
std::string own_executable();

/// A cluster the CLI creates for one application (`weir run -D` without
/// -m): a `weir jobmanager --application` process in its own directory
/// (`$TMPDIR/weir-app-*`: state/ and logs/), which starts workers on demand
/// and ends with the application.
class app_cluster {
public:
  /// Starts the jobmanager listening on `host` (jobmanager.rpc.address when
  /// set: workers on other hosts, Slurm's, must reach it) with the
  /// client's configuration flags (`config_args`); `detached`: it outlives
  /// this process (own session, output to logs/). Prints a one-line error
  /// and returns false when it does not come up.
  bool start(const std::vector<std::string>& config_args, bool detached,
             const std::string& host = "127.0.0.1");

  /// Its "HOST:PORT".
  const std::string& address() const { return address_; }
  const std::string& dir() const { return dir_; }
  /// Its REST API's URL, what clients use ("" if it has none).
  const std::string& rest_url() const { return rest_url_; }

  /// Waits for the jobmanager to end (it does once the application ended),
  /// stopping it after `grace_ms`. Returns its exit code. Removes the
  /// directory when `keep_logs_on_failure` is false or the code is 0.
  int finish(int grace_ms, bool keep_logs_on_failure = true);

  /// Stops the jobmanager (and so its workers) now.
  void kill();

private:
  std::string dir_;
  std::string address_;
  std::string rest_url_;
  pid_t pid_ = -1;
};

} // namespace weir::cli
