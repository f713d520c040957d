#include "os/spawn.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

extern char** environ;

namespace weir::os {

std::string find_on_path(const std::string& name) {
  if (name.find('/') != std::string::npos)
    return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    auto end = dirs.find(':', start);
    if (end == std::string::npos)
      end = dirs.size();
    auto dir = dirs.substr(start, end - start);
    auto candidate = (dir.empty() ? std::string{"."} : dir) + "/" + name;
    if (::access(candidate.c_str(), X_OK) == 0)
      return candidate;
    start = end + 1;
  }
  return {};
}

namespace {

void close_both(int fds[2]) {
  if (fds[0] >= 0)
    ::close(fds[0]);
  if (fds[1] >= 0)
    ::close(fds[1]);
}

/// In the child: makes `fd` its descriptor `target` (open flags for a
/// file). Only async-signal-safe calls.
bool redirect(stream s, int target, const char* file, int pipe_write) {
  int fd = -1;
  switch (s) {
    case stream::inherit:
      return true;
    case stream::null:
      fd = ::open("/dev/null", target == STDIN_FILENO ? O_RDONLY : O_WRONLY);
      break;
    case stream::file:
      if (file == nullptr)
        return false;
      fd = ::open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
      break;
    case stream::pipe:
      fd = pipe_write;
      break;
  }
  return fd >= 0 && ::dup2(fd, target) >= 0;
}

} // namespace

int spawn(const spawn_options& opts, spawned& child) {
  if (opts.argv.empty())
    return EINVAL;
  // Everything that allocates happens before the fork.
  auto program = opts.search_path ? find_on_path(opts.argv[0]) : opts.argv[0];
  if (program.empty())
    return ENOENT;
  std::vector<char*> args;
  for (auto& a : opts.argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) {
    bool dropped = false;
    for (auto& prefix : opts.drop_env)
      dropped = dropped || std::strncmp(*e, prefix.c_str(), prefix.size()) == 0;
    if (!dropped)
      env.push_back(*e);
  }
  env.push_back(nullptr);
  int report[2] = {-1, -1};
  int out[2] = {-1, -1};
  int err[2] = {-1, -1};
  if (::pipe2(report, O_CLOEXEC) != 0
      || (opts.out == stream::pipe && ::pipe2(out, O_CLOEXEC) != 0)
      || (opts.err == stream::pipe && ::pipe2(err, O_CLOEXEC) != 0)) {
    int e = errno;
    close_both(report);
    close_both(out);
    close_both(err);
    return e;
  }
  auto parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) {
    int e = errno;
    close_both(report);
    close_both(out);
    close_both(err);
    return e;
  }
  if (pid == 0) {
    // Only async-signal-safe calls between fork and exec.
    auto fail = [&](int e) {
      [[maybe_unused]] auto n = ::write(report[1], &e, sizeof e);
      ::_exit(127);
    };
    if (opts.parent_death_signal != 0) {
      ::prctl(PR_SET_PDEATHSIG, opts.parent_death_signal);
      if (::getppid() != parent) // the parent died before the prctl
        ::_exit(127);
    }
    if (opts.own_session)
      ::setsid();
    else if (opts.own_group)
      ::setpgid(0, 0);
    if (!redirect(opts.in, STDIN_FILENO, "/dev/null", -1)
        || !redirect(opts.out, STDOUT_FILENO, opts.out_file.c_str(), out[1])
        || !redirect(opts.err, STDERR_FILENO, opts.err_file.c_str(), err[1]))
      fail(errno);
    // Default signal handling and an empty mask.
    for (int sig = 1; sig < NSIG; ++sig)
      ::signal(sig, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    // Nothing else of this process's; the report pipe closes on exec.
    if (::close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
      for (int fd = 3; fd < 65536; ++fd) // a kernel before 5.11
        ::fcntl(fd, F_SETFD, FD_CLOEXEC);
    ::execve(program.c_str(), args.data(), env.data());
    fail(errno);
  }
  ::close(report[1]);
  if (out[1] >= 0)
    ::close(out[1]);
  if (err[1] >= 0)
    ::close(err[1]);
  int e = 0;
  // The pipe closes on a successful exec (close-on-exec) and reads 0 bytes.
  ssize_t n;
  do
    n = ::read(report[0], &e, sizeof e);
  while (n < 0 && errno == EINTR);
  ::close(report[0]);
  if (n == sizeof e) {
    ::waitpid(pid, nullptr, 0);
    if (out[0] >= 0)
      ::close(out[0]);
    if (err[0] >= 0)
      ::close(err[0]);
    return e;
  }
  child.pid = pid;
  child.out = out[0];
  child.err = err[0];
  return 0;
}

} // namespace weir::os
