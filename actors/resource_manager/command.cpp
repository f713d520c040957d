#include "actors/resource_manager/command.hpp"

#include <cerrno>
#include <csignal>
#include <cstring>
#include <algorithm>

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

extern char** environ;

namespace weir {

std::string command_result::problem() const {
  if (start_error != 0)
    return fmt::format("cannot run it: {}", std::strerror(start_error));
  if (timed_out)
    return "it did not end in time (killed)";
  auto line = err.substr(0, err.find('\n'));
  if (exit_code < 0)
    return fmt::format("it was killed by a signal{}",
                       line.empty() ? "" : ": " + line);
  return fmt::format("it exited with code {}{}", exit_code,
                     line.empty() ? "" : ": " + line);
}

command_result run_command(const std::vector<std::string>& argv,
                           std::chrono::milliseconds deadline,
                           const std::vector<std::string>& drop_env,
                           size_t max_output) {
  command_result r;
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    r.start_error = errno;
    return r;
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    r.start_error = errno;
    ::close(out[0]);
    ::close(out[1]);
    return r;
  }
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  posix_spawn_file_actions_addopen(&files, STDIN_FILENO, "/dev/null", O_RDONLY,
                                   0);
  posix_spawn_file_actions_adddup2(&files, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&files, err[1], STDERR_FILENO);
  // Nothing else of this process's: not its listening sockets, not its
  // state directory's files (not all of them are close-on-exec).
  posix_spawn_file_actions_addclosefrom_np(&files, 3);
  // The command gets default signal handling and an empty signal mask,
  // whatever this process set up for its stop signals.
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none, all;
  sigemptyset(&none);
  sigfillset(&all);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setsigdefault(&attr, &all);
  // A group of its own: the deadline kills what it started too (a wrapper
  // script's sbatch).
  posix_spawnattr_setpgroup(&attr, 0);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF
                                    | POSIX_SPAWN_SETPGROUP);
  std::vector<char*> args;
  for (auto& a : argv)
    args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  // The environment, less the variables it must not see.
  std::vector<char*> env;
  for (char** e = environ; *e != nullptr; ++e) {
    bool dropped = false;
    for (auto& prefix : drop_env)
      dropped = dropped || std::strncmp(*e, prefix.c_str(), prefix.size()) == 0;
    if (!dropped)
      env.push_back(*e);
  }
  env.push_back(nullptr);
  pid_t pid = 0;
  int rc = ::posix_spawnp(&pid, args[0], &files, &attr, args.data(),
                          env.data());
  posix_spawn_file_actions_destroy(&files);
  posix_spawnattr_destroy(&attr);
  ::close(out[1]);
  ::close(err[1]);
  if (rc != 0) {
    r.start_error = rc;
    ::close(out[0]);
    ::close(err[0]);
    return r;
  }
  auto until = std::chrono::steady_clock::now() + deadline;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  int open = 2;
  while (open > 0) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      until - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      r.timed_out = true;
      ::kill(-pid, SIGKILL);
      break;
    }
    int n = ::poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno != EINTR) {
      ::kill(-pid, SIGKILL); // cannot watch it: it must not run on
      break;
    }
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0)
        continue;
      char buf[4096];
      auto got = ::read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        auto room = max_output - std::min(max_output, sinks[i]->size());
        auto kept = std::min(room, static_cast<size_t>(got));
        sinks[i]->append(buf, kept);
        r.output_cut = r.output_cut || kept < static_cast<size_t>(got);
      } else if (got == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  for (auto& f : fds)
    if (f.fd >= 0)
      ::close(f.fd);
  int status = 0;
  pid_t waited;
  while ((waited = ::waitpid(pid, &status, 0)) < 0 && errno == EINTR) {
  }
  if (waited == pid && !r.timed_out && WIFEXITED(status))
    r.exit_code = WEXITSTATUS(status);
  if (waited == pid && WIFSIGNALED(status))
    r.signal = WTERMSIG(status);
  return r;
}

} // namespace weir
