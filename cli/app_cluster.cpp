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

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

extern char** environ;

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

/// Starts the attached cluster's jobmanager tied to this process: in a
/// process group of its own (a terminal's Ctrl-C reaches only this client,
/// which cancels the application) and ended with SIGTERM when this process
/// dies, however it dies (its workers go with it). Returns 0 or an errno.
int app_cluster::spawn_tied(std::vector<char*>& argv) {
  auto parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0)
    return errno;
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) // the client died before the prctl
      ::_exit(127);
    ::execve(argv[0], argv.data(), environ);
    ::_exit(127);
  }
  pid_ = pid;
  return 0;
}

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
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  // Attached, the cluster's processes share this terminal's stdout and
  // stderr, so what a driver writes there streams (their event logs go to
  // logs/). Detached, they run in a session of their own, output to files.
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  auto err_log = dir_ + "/logs/stderr.txt";
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  if (detached) {
    auto out_log = dir_ + "/logs/stdout.txt";
    posix_spawn_file_actions_addopen(&files, STDOUT_FILENO, out_log.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&files, STDERR_FILENO, err_log.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSID);
  }
  int rc = detached ? ::posix_spawn(&pid_, argv[0], &files, &attr,
                                    argv.data(), environ)
                    : spawn_tied(argv);
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
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
