#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
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

process_result run_process(const std::vector<std::string>& argv,
                           std::chrono::milliseconds deadline) {
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
  process_result result;
  if (rc != 0) {
    close(out_pipe[0]);
    close(err_pipe[0]);
    result.err = std::string{"spawn failed: "} + std::strerror(rc);
    return result;
  }
  auto until = std::chrono::steady_clock::now() + deadline;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open_fds = 2;
  char buf[65536];
  while (open_fds > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      kill(pid, SIGKILL);
      result.timed_out = true;
      break;
    }
    if (poll(fds, 2, static_cast<int>(left.count())) < 0 && errno != EINTR)
      break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0)
        continue;
      auto n = read(fds[i].fd, buf, sizeof(buf));
      if (n > 0) {
        sinks[i]->append(buf, static_cast<size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0)
      close(f.fd);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  result.max_rss_kb = usage.ru_maxrss;
  if (!result.timed_out && WIFEXITED(status))
    result.exit_code = WEXITSTATUS(status);
  return result;
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

std::string source_path(const std::string& relative) {
  return env_or("WEIR_SOURCE_ROOT", ".") + "/" + relative;
}

} // namespace weir::test
