#include "cli/app_cluster.hpp"

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <sstream>
#include <thread>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "os/spawn.hpp"

namespace weir::cli {

namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string read_text(const std::string& path) {
  std::ifstream in{path};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

} // namespace

std::string own_executable() {
  std::error_code ec;
  auto path = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string{"weir"} : path.string();
}

bool app_cluster::start(const std::vector<std::string>& config_args,
                        bool detached, const std::string& host) {
  const char* tmp = std::getenv("TMPDIR");
  std::random_device rd;
  dir_ = fmt::format("{}/weir-app-{}-{:08x}",
                     tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", ::getpid(),
                     rd());
  std::error_code ec;
  fs::create_directories(dir_ + "/logs", ec);
  if (ec) {
    fmt::print(stderr, "weir run: cannot create '{}': {}\n", dir_, ec.message());
    return false;
  }
  auto log = dir_ + "/logs/jobmanager.log";
  std::vector<std::string> args{own_executable(), "jobmanager", "--application",
                                "--host",      host,         "--port",
                                "0",           "--state-dir", dir_ + "/state",
                                "--log",       log,
                                // Clients reach it through its REST API
                                // (a port of its own; the client's
                                // rest.port, if any, comes later and wins).
                                "-Drest.port=0"};
  // Detached, no client prints what the driver prints: the jobmanager
  // writes it to its stdout, logs/stdout.txt.
  if (detached)
    args.push_back("--print-driver-output");
  args.insert(args.end(), config_args.begin(), config_args.end());
  // Attached, the cluster's processes share this terminal's stdout and
  // stderr, so what a driver writes there streams (their event logs go to
  // logs/); the jobmanager is tied to this process: in a process group of
  // its own (a terminal's Ctrl-C reaches only this client, which cancels
  // the application) and ended with SIGTERM when this process dies, however
  // it dies (its workers go with it). Detached, they run in a session of
  // their own, output to files.
  auto err_log = dir_ + "/logs/stderr.txt";
  os::spawn_options opts;
  opts.argv = args;
  if (detached) {
    opts.own_session = true;
    opts.out = opts.err = os::stream::file;
    opts.out_file = dir_ + "/logs/stdout.txt";
    opts.err_file = err_log;
  } else {
    opts.own_group = true;
    opts.parent_death_signal = SIGTERM;
  }
  os::spawned child;
  int rc = os::spawn(opts, child);
  pid_ = child.pid;
  if (rc != 0) {
    fmt::print(stderr, "weir run: cannot start the application cluster: {}\n",
               std::strerror(rc));
    return false;
  }
  // Its event log says where it listens.
  static const std::regex listening{R"(listening on (\S+):(\d+),)"};
  static const std::regex rest{R"(REST API at (https?://[^\s,]+))"};
  auto deadline = std::chrono::steady_clock::now() + 30s;
  while (std::chrono::steady_clock::now() < deadline) {
    std::smatch m;
    auto text = read_text(log);
    if (std::regex_search(text, m, listening)) {
      address_ = m[1].str() + ":" + m[2].str();
      if (std::regex_search(text, m, rest))
        rest_url_ = m[1].str();
      return true;
    }
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      auto why = read_text(err_log) + read_text(log);
      fmt::print(stderr, "weir run: the application cluster did not start: {}",
                 why.empty() ? std::string{"(no output)\n"} : why);
      return false;
    }
    std::this_thread::sleep_for(10ms); // polling its log, with a deadline
  }
  fmt::print(stderr, "weir run: the application cluster did not listen within "
                     "30 s (logs in {}/logs)\n", dir_);
  kill();
  return false;
}

int app_cluster::finish(int grace_ms, bool keep_logs_on_failure) {
  int code = 0;
  if (pid_ > 0) {
    auto deadline = std::chrono::steady_clock::now()
                    + std::chrono::milliseconds(grace_ms);
    int status = 0;
    bool done = false;
    while (!done && std::chrono::steady_clock::now() < deadline) {
      done = ::waitpid(pid_, &status, WNOHANG) == pid_;
      if (!done)
        std::this_thread::sleep_for(10ms); // waiting for its end, bounded
    }
    if (!done) {
      ::kill(pid_, SIGTERM);
      ::waitpid(pid_, &status, 0);
    }
    code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    pid_ = -1;
  }
  if (code == 0 || !keep_logs_on_failure) {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  return code;
}

void app_cluster::kill() {
  if (pid_ <= 0)
    return;
  ::kill(pid_, SIGTERM);
  int status = 0;
  ::waitpid(pid_, &status, 0);
  pid_ = -1;
}

} // namespace weir::cli
