#include "cli/remote.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>

#include <fmt/format.h>

#include "cli/config_flags.hpp"
#include "cli/exit_codes.hpp"
#include "cli/flag_table.hpp"
#include "cluster/gateway.hpp"
#include "cluster/runtime_config.hpp"
#include "cluster/stop_signal.hpp"
#include "messages/errors.hpp"
#include "net/transport.hpp"

namespace weir::cli {

int parse_flags(cxxopts::Options& opts, const std::string& action,
                const std::vector<std::string>& args, cxxopts::ParseResult& out) {
  if (auto problem = check_flags(flag_table{opts}, args); !problem.empty()) {
    fmt::print(stderr, "{}: {} (see {} --help)\n", action, problem, action);
    return exit_bad_input;
  }
  std::vector<const char*> argv{action.c_str()};
  for (auto& a : args)
    argv.push_back(a.c_str());
  try {
    out = opts.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const cxxopts::exceptions::exception& e) {
    fmt::print(stderr, "{}: {}\n", action, e.what());
    return exit_bad_input;
  }
  if (out.count("help") > 0) {
    fmt::print("{}", help_text(opts));
    return exit_ok;
  }
  if (!out.unmatched().empty()) {
    fmt::print(stderr, "{}: unexpected argument '{}' (see {} --help)\n", action,
               out.unmatched().front(), action);
    return exit_bad_input;
  }
  return -1;
}

remote_cluster::remote_cluster() = default;

remote_cluster::~remote_cluster() {
  dispatcher_ = nullptr;
  if (sys_)
    net::stop_transport(*sys_);
  sys_.reset();
}

int remote_cluster::connect(const std::string& action,
                            const cxxopts::ParseResult& flags) {
  auto cfg = load_config(action, flags);
  if (!cfg)
    return exit_bad_input;
  auto address = jobmanager_address(flags, *cfg);
  if (!parse_endpoints(address)) {
    fmt::print(stderr, "{}: {}\n", action,
               bad_jobmanager_address(flags, *cfg));
    return exit_bad_input;
  }
  return connect(action, address, remoting::from(*cfg));
}

int remote_cluster::connect(const std::string& action,
                            const std::string& address, const remoting& r) {
  auto at = parse_endpoints(address);
  if (!at) {
    fmt::print(stderr, "{}: -m '{}' is not HOST:PORT or etcd://HOST:PORT\n", action, address);
    return exit_bad_input;
  }
  cfg_ = std::make_unique<caf::actor_system_config>();
  configure_actor_system(*cfg_, r);
  sys_ = std::make_unique<caf::actor_system>(*cfg_);
  // A client logs nothing: refusals only concern listening processes.
  if (auto err = net::start_transport(*sys_, r.transport, nullptr)) {
    fmt::print(stderr, "{}: {}\n", action, describe(err));
    return exit_bad_input;
  }
  // A jobmanager that is not there fails at once (connection refused); one
  // that is there but busy (a loaded host, a TLS handshake, a cold start)
  // gets this long for the handshakes and its first answer.
  auto handles = connect_gateway(*sys_, *at, std::chrono::seconds(10),
                                 r.cluster_id);
  if (!handles) {
    fmt::print(stderr, "{}: {}\n", action, describe(handles.error()));
    return exit_cluster_error;
  }
  dispatcher_ = handles->first;
  if (at->front().etcd) {
    etcd_ = *at;
    cluster_id_ = r.cluster_id;
  }
  return -1;
}

std::function<caf::expected<dispatcher_actor>()> remote_cluster::follow() {
  if (etcd_.empty())
    return {};
  return [this]() -> caf::expected<dispatcher_actor> {
    using namespace std::chrono_literals;
    auto deadline = std::chrono::steady_clock::now() + follow_patience;
    caf::scoped_actor self{*sys_};
    for (;;) {
      auto handles = connect_gateway(*sys_, etcd_, 2s, cluster_id_);
      if (handles)
        return dispatcher_ = handles->first;
      if (stop_requested() || std::chrono::steady_clock::now() >= deadline)
        return handles.error();
      self->receive(caf::after(200ms) >> [] {});
    }
  };
}

cxxopts::Options job_action_flags(const std::string& action,
                                  const std::string& about,
                                  const std::string& usage) {
  cxxopts::Options opts(action, about);
  opts.custom_help("[-m HOST:PORT] JOBID" + usage);
  opts.positional_help("");
  opts.add_options()
    ("m,jobmanager", "HOST:PORT of the jobmanager, or etcd://HOST:PORT "
     "of an etcd that names the leader (default "
     "jobmanager.rpc.address:jobmanager.rpc.port)",
     cxxopts::value<std::string>())
    ("h,help", "print this help");
  opts.add_options(positional_group)("jobid", "the job",
                                     cxxopts::value<std::string>());
  opts.parse_positional({"jobid"});
  add_config_flags(opts);
  return opts;
}

std::optional<job_id> job_id_flag(const std::string& action,
                                  const cxxopts::ParseResult& res, int& code) {
  code = exit_bad_input;
  if (res.count("jobid") == 0) {
    fmt::print(stderr, "{}: missing JOBID (see {} --help)\n", action, action);
    return std::nullopt;
  }
  auto text = res["jobid"].as<std::string>();
  auto id = job_id::parse(text);
  if (!id) {
    fmt::print(stderr, "{}: '{}' is not a job id (32 hex characters)\n",
               action, text);
    return std::nullopt;
  }
  code = exit_ok;
  return id;
}

std::optional<job_id> connect_for_job(const std::string& action,
                                      cxxopts::Options& opts,
                                      const std::vector<std::string>& args,
                                      remote_cluster& remote, int& code,
                                      cxxopts::ParseResult& res) {
  if (code = parse_flags(opts, action, args, res); code >= 0)
    return std::nullopt;
  auto id = job_id_flag(action, res, code);
  if (!id)
    return std::nullopt;
  if (code = remote.connect(action, res); code >= 0)
    return std::nullopt;
  code = exit_ok;
  return id;
}

std::string job_error_line(const std::string& action, const caf::error& err,
                           const job_id& id) {
  if (err != make_error(errc::peer_lost))
    return fmt::format("{}: {}", action, describe(err));
  return fmt::format("{}: {}; a restarted jobmanager recovers the job: weir "
                     "status -m HOST:PORT {}",
                     action, describe(err), id.to_string());
}

int exit_code_for_job_error(const caf::error& err) {
  return err == make_error(errc::unknown_job) ? exit_bad_input
                                              : exit_cluster_error;
}

} // namespace weir::cli
