#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <cxxopts.hpp>

#include <caf/scoped_actor.hpp>

#include "cluster/gateway.hpp"
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
/// With `follow` (a cluster named through etcd, remote_cluster::follow), a
/// lost master is followed: the wait goes on at the new leader's
/// Dispatcher.
int wait_for_job(caf::actor_system& sys, dispatcher_actor dispatcher, job_id id,
                 const std::string& action, bool stream = false,
                 const std::function<caf::expected<dispatcher_actor>()>& follow
                 = {});

class remote_cluster;

/// How long a client attached to a job follows a lost leader through etcd
/// before it gives up (exit 3): longer than any sensible lease and recovery.
constexpr std::chrono::minutes follow_patience{5};

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

  /// For a cluster named through etcd (-m etcd://...): a function that
  /// connects to its leader again, waiting while there is none (up to
  /// follow_patience, or until Ctrl-C), and returns its Dispatcher. Empty
  /// for a fixed address.
  std::function<caf::expected<dispatcher_actor>()> follow();

private:
  std::unique_ptr<caf::actor_system_config> cfg_;
  std::unique_ptr<caf::actor_system> sys_;
  dispatcher_actor dispatcher_;
  /// The etcd members of -m etcd://... (empty: a fixed address).
  std::vector<endpoint> etcd_;
  std::string cluster_id_;
};

} // namespace weir::cli
