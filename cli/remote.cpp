#include "cli/remote.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "cli/config_flags.hpp"
#include "process/exit_codes.hpp"
#include "cli/flag_table.hpp"
#include "client/job_client.hpp"
#include "ha/gateway.hpp"
#include "ha/leader_jobs.hpp"
#include "messages/errors.hpp"
#include "config/keys.hpp"
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

remote_cluster::~remote_cluster() = default;

namespace {

/// "-m" as a client gives it, or the configuration's REST address.
std::string rest_address_of(const cxxopts::ParseResult& flags,
                            const configuration& cfg) {
  if (flags.count("jobmanager") > 0)
    return flags["jobmanager"].as<std::string>();
  auto host = cfg.get(keys::rest_client_address);
  if (host.empty())
    host = cfg.get(keys::jobmanager_address);
  return fmt::format("{}:{}", host, cfg.get(keys::rest_port));
}

/// Why the configuration's REST address (no -m) is not one.
std::string bad_rest_address(const configuration& cfg,
                             const std::string& address) {
  auto from = [&](const auto& key) {
    auto origin = cfg.origin(key);
    return origin.empty() ? std::string{"default"} : origin;
  };
  auto& host_key = cfg.get(keys::rest_client_address).empty()
                     ? keys::jobmanager_address
                     : keys::rest_client_address;
  return fmt::format("{} '{}' ({}) and {} {} ({}) give '{}', which is not "
                     "HOST:PORT (no -m given)",
                     host_key.name, cfg.get(host_key), from(host_key),
                     keys::rest_port.name, cfg.get(keys::rest_port),
                     from(keys::rest_port), address);
}

} // namespace

int remote_cluster::connect(const std::string& action,
                            const cxxopts::ParseResult& flags) {
  auto cfg = load_config(action, flags);
  if (!cfg)
    return exit_bad_input;
  auto address = rest_address_of(flags, *cfg);
  if (flags.count("jobmanager") == 0 && !parse_endpoint(address)) {
    fmt::print(stderr, "{}: {}\n", action, bad_rest_address(*cfg, address));
    return exit_bad_input;
  }
  return connect(action, address, *cfg);
}

int remote_cluster::connect(const std::string& action,
                            const std::string& address,
                            const configuration& cfg) {
  auto jobs = connect_jobs(address, cfg, [action](const std::string& note) {
    // Over a progress line on a terminal (weir run, weir wait).
    fmt::print(stderr, "{}{}: {}\n", isatty(STDERR_FILENO) ? "\r\x1b[K" : "",
               action, note);
  });
  if (!jobs) {
    auto& err = jobs.error();
    auto text = describe(err);
    if (text.rfind("'" + address + "'", 0) == 0)
      text = "-m " + text; // the address itself is wrong
    fmt::print(stderr, "{}: {}\n", action, text);
    return err == make_error(errc::invalid_config) ? exit_bad_input
                                                   : exit_cluster_error;
  }
  jobs_ = std::move(*jobs);
  address_ = address;
  return -1;
}

cxxopts::Options job_action_flags(const std::string& action,
                                  const std::string& about,
                                  const std::string& usage) {
  cxxopts::Options opts(action, about);
  opts.custom_help("[-m HOST:PORT] JOBID" + usage);
  opts.positional_help("");
  opts.add_options()
    ("m,jobmanager", "HOST:PORT of the jobmanager's REST API (rest.port), "
     "or etcd://HOST:PORT of an etcd that names the leader (default "
     "rest.address or jobmanager.rpc.address, and rest.port)",
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
                           const job_id& id, const std::string& address) {
  if (err != make_error(errc::peer_lost))
    return fmt::format("{}: {}", action, describe(err));
  return fmt::format("{}: {}; a restarted jobmanager recovers the job: weir "
                     "status -m {} {}",
                     action, describe(err), address, id.to_string());
}

int exit_code_for_job_error(const caf::error& err) {
  return err == make_error(errc::unknown_job)
             || err == make_error(errc::invalid_config)
           ? exit_bad_input
           : exit_cluster_error;
}

} // namespace weir::cli
