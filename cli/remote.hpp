#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include <caf/scoped_actor.hpp>

#include "cluster/receiver_watch.hpp"
#include "cluster/runtime_config.hpp"
#include "messages/dispatcher.hpp"

namespace caf {
class actor_system;
class actor_system_config;
} // namespace caf

namespace weir::cli {

/// Parses an action's flags; prints the help or a one-line error. Returns
/// the exit code to end with, or -1 to go on.
int parse_flags(cxxopts::Options& opts, const std::string& action,
                const std::vector<std::string>& args, cxxopts::ParseResult& out);

/// Waits for job `id`'s result and prints it like `weir run` (records on
/// stdout, status on stderr, progress on a terminal; Ctrl-C cancels).
/// With `stream`, collected records are printed while the job runs (a
/// driver's output). Returns the exit code; 3 with a one-line error when
/// the master is lost.
int wait_for_job(caf::actor_system& sys, dispatcher_actor dispatcher, job_id id,
                 const std::string& action, bool stream = false);

class remote_cluster;

/// More flags of a job action: `add` declares them (and appends
/// positional ones after JOBID); `usage` is appended to "-m HOST:PORT JOBID".
struct job_flags {
  std::function<void(cxxopts::Options&, std::vector<std::string>&)> add;
  std::string usage;
};

/// Parses "-m HOST:PORT JOBID" (plus `extra` and the configuration flags)
/// of a job action into `res` and connects. Returns the job id, or nothing
/// with `code` set after printing the help or a one-line error.
std::optional<job_id> connect_for_job(const std::string& action,
                                      const std::string& about,
                                      const std::vector<std::string>& args,
                                      remote_cluster& remote, int& code,
                                      cxxopts::ParseResult& res,
                                      const job_flags& extra = {});

/// Exit code of a failed request about one job: 2 for an unknown job, else
/// 3.
int exit_code_for_job_error(const caf::error& err);

/// Sends `xs...` to `to` and waits for the reply, as
/// `self->request(to, timeout, xs...).receive(on_value, on_error)` does,
/// except that a master that dies or hangs ends the wait with
/// `errc::peer_lost` within heartbeat.timeout rather than at `timeout`.
template <class Handle, class OnValue, class OnError, class... Ts>
void ask(caf::scoped_actor& self, const Handle& to, caf::timespan timeout,
         OnValue on_value, OnError on_error, Ts&&... xs) {
  auto reply = self->request(to, timeout, std::forward<Ts>(xs)...);
  receiver_watch watch{caf::actor_cast<caf::strong_actor_ptr>(to),
                       caf::actor_cast<caf::strong_actor_ptr>(self),
                       reply.id()};
  reply.receive(std::move(on_value), std::move(on_error));
}

/// The line for a failed request about job `id`: the error, and for a lost
/// master how to find the job again once a jobmanager is back.
std::string job_error_line(const std::string& action, const caf::error& err,
                           const job_id& id);

/// A client's connection to a session cluster (`-m HOST:PORT`).
class remote_cluster {
public:
  remote_cluster();
  ~remote_cluster();

  /// Connects to the jobmanager named by `-m`, or else by the configuration
  /// (jobmanager.rpc.address and .port). Returns the exit code to end with
  /// after a one-line error, or -1 when connected.
  int connect(const std::string& action, const cxxopts::ParseResult& flags);

  /// Connects to `address` ("HOST:PORT"); as above.
  int connect(const std::string& action, const std::string& address,
              const remoting& r);

  caf::actor_system& system() { return *sys_; }
  dispatcher_actor dispatcher() const { return dispatcher_; }

private:
  std::unique_ptr<caf::actor_system_config> cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  dispatcher_actor dispatcher_;
};

} // namespace weir::cli
