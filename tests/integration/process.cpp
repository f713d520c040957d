#include "process.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace weir::test {

namespace {

std::string env_or(const char* name, const char* fallback) {
  auto* v = std::getenv(name);
  return v != nullptr ? v : fallback;
}

} // namespace

running_process::running_process(const std::vector<std::string>& argv) {
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0)
    throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_pipe[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err_pipe[1], 2);
  std::vector<char*> cargv;
  for (auto& a : argv)
    cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  pid_t pid = 0;
  auto rc = posix_spawn(&pid, argv[0].c_str(), &fa, nullptr, cargv.data(),
                        environ);
  posix_spawn_file_actions_destroy(&fa);
  close(out_pipe[1]);
  close(err_pipe[1]);
  fds_[0] = out_pipe[0];
  fds_[1] = err_pipe[0];
  if (rc != 0) {
    result_.err = std::string{"spawn failed: "} + std::strerror(rc);
    reaped_ = true;
    return;
  }
  pid_ = pid;
}

running_process::~running_process() {
  if (!reaped_) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  for (auto fd : fds_)
    if (fd >= 0)
      close(fd);
}

bool running_process::pump(std::chrono::milliseconds timeout) {
  pollfd fds[2] = {{fds_[0], POLLIN, 0}, {fds_[1], POLLIN, 0}};
  if (fds_[0] < 0 && fds_[1] < 0)
    return false;
  if (poll(fds, 2, static_cast<int>(timeout.count())) < 0 && errno != EINTR)
    return false;
  std::string* sinks[2] = {&result_.out, &result_.err};
  char buf[65536];
  for (int i = 0; i < 2; ++i) {
    if (fds_[i] < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0)
      continue;
    auto n = read(fds_[i], buf, sizeof(buf));
    if (n > 0) {
      sinks[i]->append(buf, static_cast<size_t>(n));
    } else {
      close(fds_[i]);
      fds_[i] = -1;
    }
  }
  return fds_[0] >= 0 || fds_[1] >= 0;
}

bool running_process::wait_for_stderr(const std::string& text,
                                      std::chrono::milliseconds deadline) {
  return wait_for(result_.err, text, deadline);
}

bool running_process::wait_for_stdout(const std::string& text,
                                      std::chrono::milliseconds deadline) {
  return wait_for(result_.out, text, deadline);
}

bool running_process::wait_for(const std::string& output,
                               const std::string& text,
                               std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (output.find(text) == std::string::npos) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      until - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !pump(left))
      return output.find(text) != std::string::npos;
  }
  return true;
}

void running_process::signal(int sig) {
  if (!reaped_)
    kill(pid_, sig);
}

process_result running_process::finish(std::chrono::milliseconds deadline) {
  if (reaped_)
    return result_;
  auto until = std::chrono::steady_clock::now() + deadline;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(pid_, SIGKILL);
      result_.timed_out = true;
      break;
    }
    if (!pump(left))
      break;
  }
  int status = 0;
  rusage usage{};
  wait4(pid_, &status, 0, &usage);
  reaped_ = true;
  result_.max_rss_kb = usage.ru_maxrss;
  if (!result_.timed_out && WIFEXITED(status))
    result_.exit_code = WEXITSTATUS(status);
  return result_;
}

std::string listening_address(running_process& jobmanager,
                              std::chrono::milliseconds deadline) {
  if (!jobmanager.wait_for_stderr(", state in ", deadline))
    return {};
  std::smatch m;
  const auto& log = jobmanager.stderr_so_far();
  if (!std::regex_search(log, m, std::regex{"listening on ([0-9.]+:[0-9]+),"}))
    return {};
  return m[1];
}

std::string rest_address(running_process& jobmanager,
                         std::chrono::milliseconds deadline) {
  if (!jobmanager.wait_for_stderr(", state in ", deadline))
    return {};
  std::smatch m;
  const auto& log = jobmanager.stderr_so_far();
  if (!std::regex_search(log, m,
                         std::regex{"REST API at https?://([0-9.]+:[0-9]+)"}))
    return {};
  return m[1];
}

process_result run_process(const std::vector<std::string>& argv,
                           std::chrono::milliseconds deadline) {
  running_process p{argv};
  return p.finish(deadline);
}

process_result run_weir(const std::vector<std::string>& args,
                        std::chrono::milliseconds deadline) {
  std::vector<std::string> argv{env_or("WEIR_BIN", "build/cli/weir")};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, deadline);
}

temp_dir::temp_dir() {
  char templ[] = "/tmp/weir-test-XXXXXX";
  auto* p = mkdtemp(templ);
  if (p == nullptr)
    throw std::runtime_error("mkdtemp failed");
  path_ = p;
}

temp_dir::~temp_dir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string temp_dir::write(const std::string& name,
                            const std::string& content) const {
  auto p = file(name);
  std::ofstream f{p, std::ios::binary};
  f << content;
  return p;
}

std::string read_file(const std::string& path) {
  std::ifstream f{path, std::ios::binary};
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

bool exists(const std::string& path) {
  return std::filesystem::exists(path);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> result;
  std::string line;
  std::istringstream in{text};
  while (std::getline(in, line))
    result.push_back(line);
  return result;
}

std::vector<std::string> sorted_lines(const std::string& text) {
  auto result = lines_of(text);
  std::sort(result.begin(), result.end());
  return result;
}

std::string on_path(const std::string& name) {
  std::string path = env_or("PATH", "");
  size_t from = 0;
  for (;;) {
    auto to = path.find(':', from);
    auto candidate = path.substr(from, to - from) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    if (to == std::string::npos)
      return {};
    from = to + 1;
  }
}

int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    return 0;
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(sa);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) == 0
      && ::getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) == 0)
    port = ntohs(sa.sin_port);
  ::close(fd);
  return port;
}

std::vector<std::string> processes_mentioning(const std::string& text) {
  namespace fs = std::filesystem;
  std::vector<std::string> found;
  std::error_code ec;
  for (auto& entry : fs::directory_iterator("/proc", ec)) {
    auto cmdline = entry.path() / "cmdline";
    std::error_code ignored;
    if (!fs::is_regular_file(cmdline, ignored))
      continue;
    auto args = read_file(cmdline.string());
    std::replace(args.begin(), args.end(), '\0', ' ');
    if (args.find(text) != std::string::npos
        && args.find("integration_") == std::string::npos)
      found.push_back(entry.path().filename().string() + ": " + args);
  }
  return found;
}

scoped_env::scoped_env(std::string name, const std::string& value)
  : name_(std::move(name)) {
  if (const char* v = std::getenv(name_.c_str())) {
    old_ = v;
    had_ = true;
  }
  ::setenv(name_.c_str(), value.c_str(), 1);
}

scoped_env::~scoped_env() {
  if (had_)
    ::setenv(name_.c_str(), old_.c_str(), 1);
  else
    ::unsetenv(name_.c_str());
}

std::string source_path(const std::string& relative) {
  return env_or("WEIR_SOURCE_ROOT", ".") + "/" + relative;
}

} // namespace weir::test

namespace weir::test {

long status_kib(int pid, const std::string& key) {
  std::ifstream in{"/proc/" + std::to_string(pid) + "/status"};
  std::string word;
  long value = 0;
  while (in >> word) {
    if (word == key) {
      in >> value;
      return value;
    }
    in.ignore(4096, '\n');
  }
  return 0;
}

} // namespace weir::test
