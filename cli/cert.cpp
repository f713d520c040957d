// `weir cert ca|node|client`: the cluster's CA and the certificates it
// signs for mutual TLS (docs/security.md § Certificates). Flink leaves this
// to keytool; three commands here give a secure cluster.
#include <charconv>
#include <filesystem>
#include <optional>

#include <cxxopts.hpp>
#include <fmt/format.h>

#include "cli/action_flags.hpp"
#include "cli/actions.hpp"
#include "messages/errors.hpp"
#include "process/exit_codes.hpp"
#include "cli/remote.hpp"
#include "net/certificates.hpp"

namespace weir::cli {

namespace {

const std::string action = "weir cert";

constexpr int default_ca_days = 3650;
constexpr int default_leaf_days = 365;
constexpr int max_days = 36500; // a hundred years

constexpr const char* usage = R"(Usage:
  weir cert ca --dir DIR [--name NAME] [--days N]
  weir cert node --dir DIR --name NAME [--host H]... [--days N]
  weir cert client --dir DIR --name NAME [--days N]

Make the cluster's CA (DIR/ca.pem, DIR/ca-key.pem), then sign a node
certificate (may run a jobmanager or taskmanager) or a client certificate
(may use the CLI) with it: DIR/NAME.pem, DIR/NAME-key.pem. Existing files
are never overwritten. Run 'weir cert KIND --help' for the flags of a kind.
)";

bool is_kind(const std::string& word) {
  return word == "ca" || word == "node" || word == "client";
}

int default_days_of(const std::string& kind) {
  return kind == "ca" ? default_ca_days : default_leaf_days;
}

} // namespace

cxxopts::Options cert_flags(const std::string& kind) {
  auto default_days = default_days_of(kind);
  cxxopts::Options opts(action + " " + kind, kind == "ca"
                                               ? "Make the cluster's CA."
                                               : "Sign a " + kind
                                                   + " certificate with the "
                                                     "cluster's CA.");
  opts.add_options()
    ("dir", "the directory of ca.pem and ca-key.pem",
     cxxopts::value<std::string>())
    ("name", kind == "ca" ? "the CA's name (default weir-ca)"
                          : "the certificate's name (CN) and file name",
     cxxopts::value<std::string>())
    ("days", fmt::format("days the certificate is valid (default {}, at most "
                         "{})", default_days, max_days),
     cxxopts::value<std::string>())
    ("h,help", "print this help");
  if (kind == "node")
    opts.add_options()("host", "an address or DNS name the node is reached at "
                               "(repeatable; default 127.0.0.1 and localhost)",
                       cxxopts::value<std::vector<std::string>>());
  return opts;
}

namespace {

/// `path` quoted for a shell when it needs it.
std::string shell_word(const std::string& path) {
  auto plain = path.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLM"
                                      "NOPQRSTUVWXYZ0123456789/._-+=:,@")
               == std::string::npos;
  if (plain)
    return path;
  std::string quoted = "'";
  for (char c : path)
    quoted += c == '\'' ? std::string{"'\\''"} : std::string(1, c);
  return quoted + "'";
}

/// "1 day", "365 days".
std::string days_text(int days) {
  return fmt::format("{} day{}", days, days == 1 ? "" : "s");
}

std::string join(const std::vector<std::string>& xs) {
  std::string out;
  for (auto& x : xs)
    out += (out.empty() ? "" : ", ") + x;
  return out;
}

/// What to set to use a node or client certificate: -D flags and YAML.
void print_use(const net::cert_files& files, const std::string& ca) {
  const std::pair<const char*, std::string> keys[] = {
    {"security.ssl.internal.enabled", "true"},
    {"security.ssl.internal.certificate", files.certificate},
    {"security.ssl.internal.key", files.key},
    {"security.ssl.internal.trust-certificates", ca},
  };
  std::string flags;
  std::string yaml;
  for (auto& [key, value] : keys) {
    flags += fmt::format(" {}", shell_word(fmt::format("-D{}={}", key, value)));
    yaml += fmt::format("  {}: {}\n", key, value);
  }
  fmt::print("use:{}\nor in weir.yaml:\n{}", flags, yaml);
}

/// What `weir cert KIND` was asked to make.
struct cert_request {
  std::string kind; ///< ca, node or client
  std::string dir;  ///< absolute
  std::string name;
  std::vector<std::string> hosts;
  int days = 0;
};

int make_ca(const cert_request& req) {
  auto made = net::make_ca(req.dir, req.name, net::validity::days(req.days));
  if (!made) {
    fmt::print(stderr, "{}: {}\n", action, describe(made.error()));
    return exit_bad_input;
  }
  auto& files = *made;
  fmt::print("wrote {}, {} (CA {}, valid {})\n", files.certificate,
             files.key, req.name, days_text(req.days));
  fmt::print("keep {} private: whoever holds it can make certificates this "
             "cluster trusts\nnext: weir cert node --dir {} --name NAME, "
             "weir cert client --dir {} --name NAME\n",
             files.key, shell_word(req.dir), shell_word(req.dir));
  return exit_ok;
}

int issue(const cert_request& req) {
  auto kind = req.kind == "node" ? net::cert_kind::node : net::cert_kind::client;
  auto made = net::issue(req.dir, kind, req.name, req.hosts,
                         net::validity::days(req.days));
  if (!made) {
    fmt::print(stderr, "{}: {}\n", action, describe(made.error()));
    return exit_bad_input;
  }
  auto& files = *made;
  fmt::print("wrote {}, {} ({} certificate for {}, valid {}{})\n",
             files.certificate, files.key, req.kind, req.name,
             days_text(req.days),
             files.hosts.empty() ? "" : "; hosts " + join(files.hosts));
  print_use(files, (std::filesystem::path{req.dir} / "ca.pem").string());
  return exit_ok;
}

/// DIR made absolute, without a trailing '/', so the paths printed work
/// from anywhere.
std::string absolute_dir(const std::string& dir) {
  auto path = std::filesystem::absolute(dir).lexically_normal();
  return path.has_filename() ? path.string() : path.parent_path().string();
}

/// --days N within [1, max_days]; prints a one-line error otherwise.
std::optional<int> days_flag(const cxxopts::ParseResult& res, int default_days) {
  if (res.count("days") == 0)
    return default_days;
  auto text = res["days"].as<std::string>();
  int days = 0;
  auto* end = text.data() + text.size();
  auto parsed = std::from_chars(text.data(), end, days);
  if (parsed.ec == std::errc{} && parsed.ptr == end && days >= 1
      && days <= max_days)
    return days;
  fmt::print(stderr, "{}: --days: expected a value in [1, {}], got '{}'\n",
             action, max_days, text);
  return std::nullopt;
}

/// The flags of `weir cert KIND ...`; nothing, with `code` set, after the
/// help or a one-line error.
std::optional<cert_request> parse_request(const std::vector<std::string>& args,
                                          int& code) {
  cert_request req;
  req.kind = args[0];
  auto default_days = default_days_of(req.kind);
  auto opts = cert_flags(req.kind);
  cxxopts::ParseResult res;
  if (code = parse_flags(opts, action, {args.begin() + 1, args.end()}, res);
      code >= 0)
    return std::nullopt;
  code = exit_bad_input;
  auto missing = [&](const char* flag) {
    fmt::print(stderr, "{}: missing {} (see weir cert {} --help)\n", action,
               flag, req.kind);
    return std::nullopt;
  };
  if (res.count("dir") == 0 || res["dir"].as<std::string>().empty())
    return missing("--dir DIR");
  if (req.kind != "ca" && res.count("name") == 0)
    return missing("--name NAME");
  auto days = days_flag(res, default_days);
  if (!days)
    return std::nullopt;
  req.days = *days;
  req.dir = absolute_dir(res["dir"].as<std::string>());
  req.name = res.count("name") > 0 ? res["name"].as<std::string>() : "weir-ca";
  if (res.count("host") > 0)
    req.hosts = res["host"].as<std::vector<std::string>>();
  return req;
}

} // namespace

int cert_action(const std::vector<std::string>& args) {
  if (!args.empty() && (args[0] == "-h" || args[0] == "--help")) {
    fmt::print("{}", usage);
    return exit_ok;
  }
  if (args.empty() || !is_kind(args[0])) {
    auto what = args.empty() ? "missing KIND" : "unknown kind '" + args[0] + "'";
    fmt::print(stderr, "{}: {}: expected ca, node or client (see weir cert "
                       "--help)\n",
               action, what);
    return exit_bad_input;
  }
  int code = exit_ok;
  auto req = parse_request(args, code);
  if (!req)
    return code;
  return req->kind == "ca" ? make_ca(*req) : issue(*req);
}

} // namespace weir::cli
